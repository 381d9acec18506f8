package agent

import (
	"context"

	"github.com/agentfleet/agentfleet/execenv"
)

// SubagentPrompter is an optional extension of Profile (package profiles
// implements it): a profile that has it renders the system prompt of a
// session that may not spawn subagents without mentioning their tools.
// A Profile without it gets BuildSystemPrompt, which may mention them.
type SubagentPrompter interface {
	BuildSystemPromptFor(ctx context.Context, env execenv.Environment, model, userInstructions string, subagents bool) (string, error)
}

// canSpawn reports whether this session may spawn a subagent: its
// children's depth is within SessionConfig.MaxSubagentDepth (a negative
// depth forbids subagents). A session that may not spawn gets neither the
// subagent tools nor their mention in the prompt.
func (s *Session) canSpawn() bool {
	max := s.maxDepth()
	return max >= 0 && s.cfg.Depth+1 <= max
}

// buildSystemPrompt renders the profile's prompt for model, telling a
// SubagentPrompter whether the session may spawn.
func (s *Session) buildSystemPrompt(ctx context.Context, model string) (string, error) {
	if p, ok := s.profile.(SubagentPrompter); ok {
		return p.BuildSystemPromptFor(ctx, s.env, model, s.cfg.Session.UserInstructions, s.canSpawn())
	}
	return s.profile.BuildSystemPrompt(ctx, s.env, model, s.cfg.Session.UserInstructions)
}
