package agent

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"regexp"

	"github.com/agentfleet/agentfleet/llm"
)

// DefaultNoProgressRounds is SessionConfig.NoProgressRounds when 0.
const DefaultNoProgressRounds = 8

// errNoProgress ends an input whose rounds stopped making progress.
var errNoProgress = errors.New("agent: no progress")

// sourceWatchdog marks the steering turn the progress watchdog injects.
const sourceWatchdog = "watchdog"

// watchdog counts consecutive tool rounds that made no progress. A round
// makes progress when one of its calls is fresh: a call not made before
// in this input that did not fail, a call made before whose output is new
// (something changed), or a failure not seen before. So a session that
// repeats calls it already made, changes files to what they already hold,
// or gets the same failure again (for any arguments) is stalled; reading
// new files or trying a new command is progress (the turn and round
// limits bound exploration). A round that waits on a subagent neither
// counts nor resets the streak, and a parked round is never observed:
// waiting does not count. The loop owner alone uses it; a new input
// starts it afresh.
type watchdog struct {
	outputs map[string]map[[32]byte]bool // call signature -> outputs it got that did not fail
	fails   map[[32]byte]bool            // tool name + failure text seen
	streak  int                          // consecutive rounds without progress
	warned  bool                         // the model was told during this streak
}

func (w *watchdog) reset() { *w = watchdog{} }

// observe records one round and reports whether it made progress, or ok
// false for a round that only waited.
func (w *watchdog) observe(calls []llm.ToolCall, results []llm.ToolResult) (progress, ok bool) {
	if w.outputs == nil {
		w.outputs, w.fails = map[string]map[[32]byte]bool{}, map[[32]byte]bool{}
	}
	byID := make(map[string]llm.ToolResult, len(results))
	for _, r := range results {
		byID[r.ToolCallID] = r
	}
	waited := false
	for _, c := range calls {
		if c.Name == "wait" {
			waited = true
			continue
		}
		r, ran := byID[c.ID]
		if ran && w.fresh(c, r) {
			progress = true
		}
	}
	if waited && !progress {
		return false, false
	}
	return progress, true
}

// fresh records one call's result and reports whether it is new.
func (w *watchdog) fresh(c llm.ToolCall, r llm.ToolResult) bool {
	out := sha256.Sum256([]byte(c.Name + "\x00" + volatile.ReplaceAllString(r.Content, "#")))
	if r.IsError {
		if w.fails[out] {
			return false
		}
		w.fails[out] = true
		return true
	}
	sig := fmt.Sprintf("%s:%x", c.Name, sha256.Sum256(c.Arguments))
	seen := w.outputs[sig]
	if seen == nil {
		seen = map[[32]byte]bool{}
		w.outputs[sig] = seen
	}
	if seen[out] {
		return false
	}
	seen[out] = true
	return true
}

// volatile matches what differs between two runs of the same failing
// command (durations, counts, addresses), so a failure repeated is seen as
// the same.
var volatile = regexp.MustCompile(`[0-9]+`)

// noProgressRounds is the configured window, 0 when the watchdog is off.
func (s *Session) noProgressRounds() int {
	n := s.cfg.Session.NoProgressRounds
	switch {
	case n < 0:
		return 0
	case n == 0:
		return DefaultNoProgressRounds
	}
	return n
}

// watchProgress observes a round. When n rounds in a row (the configured
// window) made no progress it tells the model once (a steering turn and
// WARNING); when half as many again pass without progress it returns
// errNoProgress, which stops the input with StopNoProgress. Progress
// resets the streak and the warning.
func (s *Session) watchProgress(ctx context.Context, calls []llm.ToolCall, results []llm.ToolResult, round int) error {
	n := s.noProgressRounds()
	if n == 0 {
		return nil
	}
	progress, counted := s.watch.observe(calls, results)
	switch {
	case !counted:
		return nil
	case progress:
		s.watch.streak, s.watch.warned = 0, false
		return nil
	}
	s.watch.streak++
	if stop := stopAfter(n); s.watch.streak >= stop {
		s.emit(Event{Kind: EventTurnLimit, Round: round, Stop: StopNoProgress,
			Text: fmt.Sprintf("Stopped: %d tool rounds in a row made no progress.", s.watch.streak)})
		return errNoProgress
	}
	if s.watch.warned || s.watch.streak < n {
		return nil
	}
	s.watch.warned = true
	msg := fmt.Sprintf("No progress: your last %d tool rounds repeated calls you had already made with the same results, "+
		"or got the same failures again. Change your approach now: read the error and try something different, or finish and report what blocks you. "+
		"After %d more rounds without progress this session stops.", s.watch.streak, stopAfter(n)-s.watch.streak)
	if err := s.appendTurn(ctx, Turn{Kind: TurnSteering, Text: msg, Source: sourceWatchdog}); err != nil {
		return err
	}
	s.emit(Event{Kind: EventWarning, Round: round, Text: msg})
	return nil
}

// stopAfter is the streak at which a window of n stops the input: n
// rounds, then half as many again for the model to act on the warning.
func stopAfter(n int) int { return n + (n+1)/2 }
