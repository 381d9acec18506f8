package agent

import (
	"context"
	"fmt"

	"github.com/agentfleet/agentfleet/llm"
)

// checkLimits returns why the loop must stop before the next model call, or
// "" to go on. It emits TURN_LIMIT for the limits.
func (s *Session) checkLimits(ctx context.Context, round int) StopReason {
	if ctx.Err() != nil {
		return StopInterrupted // settle refines it from the cause
	}
	cfg := s.cfg.Session
	if roundLimitReached(cfg.MaxToolRoundsPerInput, round) {
		s.emit(Event{Kind: EventTurnLimit, Round: round, Stop: StopRoundLimit})
		return StopRoundLimit
	}
	s.mu.Lock()
	turns := s.assistant
	s.mu.Unlock()
	if turnLimitReached(cfg.MaxTurns, turns) {
		s.emit(Event{Kind: EventTurnLimit, Turns: turns, Stop: StopTurnLimit})
		return StopTurnLimit
	}
	return ""
}

func roundLimitReached(max, rounds int) bool { return max > 0 && rounds >= max }

func turnLimitReached(max, turns int) bool { return max > 0 && turns >= max }

// contextWarnPercent is the share of the window above which WARNING is emitted.
const contextWarnPercent = 80

// checkContextUsage emits WARNING (once per input) when the context in use
// exceeds 80% of the profile's window. It uses the provider's reported
// tokens when there are any, else 1 token per 4 characters of history.
func (s *Session) checkContextUsage(u llm.Usage) {
	window := s.profile.ContextWindow()
	if window <= 0 {
		return
	}
	s.mu.Lock()
	tokens := u.InputTokens + u.OutputTokens
	if tokens == 0 {
		tokens = historyChars(s.history, s.prompts[s.model]) / 4
	}
	fire := !s.warned && contextOver(tokens, window)
	if fire {
		s.warned = true
	}
	s.mu.Unlock()
	if fire {
		pct := tokens * 100 / window
		s.emit(Event{Kind: EventWarning, ContextPercent: pct,
			Text: fmt.Sprintf("Context usage at ~%d%% of context window", pct)})
	}
}

func contextOver(tokens, window int) bool { return tokens*100 > window*contextWarnPercent }

// historyChars counts the characters the model sees.
func historyChars(history []Turn, prompt string) int {
	n := len(prompt)
	for _, t := range history {
		n += len(t.Text) + len(t.Reasoning)
		for _, c := range t.ToolCalls {
			n += len(c.Name) + len(c.Arguments)
		}
		for _, r := range t.Results {
			n += len(r.Content)
		}
	}
	return n
}
