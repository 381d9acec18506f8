package spawn

import (
	"context"
	"strings"

	"github.com/agentfleet/agentfleet/agent"
	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/store"
)

// Wait returns the child's result when it has ended; otherwise it parks the
// parent (agent.ErrParked) and remembers what it waits for (Awaited). The
// work of an ended child that had a worktree is merged into the parent's
// working directory first, and the result's output ends with what the
// merge did (a conflict names the files and the branch that keeps the
// child's work).
func (s *Spawner) Wait(ctx context.Context, agentID string) (agent.SubagentResult, error) {
	t, err := s.child(ctx, agentID)
	if err != nil {
		return agent.SubagentResult{}, err
	}
	if !t.State.Terminal() {
		if s.f.Git != nil && traveled(t) {
			s.pushState(ctx) // travel.go: a resume elsewhere finds the files the parent parks with
		}
		s.mu.Lock()
		s.waits = append(s.waits, t.ID)
		s.mu.Unlock()
		return agent.SubagentResult{}, agent.ErrParked
	}
	res := subagentResult(t)
	if note := s.mergeBack(ctx, t); note != "" {
		res.Output = strings.TrimSpace(res.Output + "\n\n" + note)
	}
	return res, nil
}

// subagentResult maps a finished child task to what wait returns.
func subagentResult(t store.Task) agent.SubagentResult {
	res, _ := fleet.DecodeResult(t.Result) // a child without a result reports its task error
	out := res.FinalText
	if !res.Success && res.Error != "" {
		out = strings.TrimSpace(out + "\n\n[subagent " + string(t.State) + ": " + res.Error + "]")
	}
	if out == "" && t.Error != "" {
		out = "[subagent " + string(t.State) + ": " + t.Error + "]"
	}
	return agent.SubagentResult{AgentID: t.ID.String(), Status: subagentStatus(t.State), Output: out,
		Success: t.State == store.TaskSucceeded && res.Success, TurnsUsed: res.TurnsUsed}
}

// subagentStatus maps a child task's state to a subagent status.
func subagentStatus(s store.TaskState) string {
	switch s {
	case store.TaskSucceeded:
		return agent.SubagentCompleted
	case store.TaskFailed:
		return agent.SubagentFailed
	case store.TaskCancelled:
		return agent.SubagentClosed
	}
	return agent.SubagentRunning
}
