package compact

import (
	"context"
	"fmt"
)

// Strategies, in the order Run tries them.
const (
	StrategyPrune     = "prune"
	StrategySummarize = "summarize"
	StrategyTrim      = "trim"
)

// Reasons a compaction runs.
const (
	ReasonThreshold     = "threshold"      // the estimate passed Budget.Threshold
	ReasonContextLength = "context_length" // the provider refused the request as too long
	ReasonRequested     = "requested"      // the host asked (Session.Compact)
)

// Record is one compaction: the view it leaves and how it got there. The
// session stores it as a turn of its own; the transcript before it is not
// changed.
type Record struct {
	View
	Reason     string   `json:"reason"`
	Strategies []string `json:"strategies,omitempty"`
	// Replaced is the range of turns [from, to) the new summary replaces;
	// zero when no summary was written.
	Replaced [2]int `json:"replaced,omitzero"`
	// TokensBefore and TokensAfter are the estimated request sizes.
	TokensBefore int `json:"tokens_before"`
	TokensAfter  int `json:"tokens_after"`
	// SummaryError says why the summary could not be written (trim ran
	// instead).
	SummaryError string `json:"summary_error,omitempty"`
	// LearnedWindow is a window smaller than the configured one that a
	// provider's context-length error named, kept for a resumed session.
	LearnedWindow int `json:"learned_window,omitempty"`
}

// Changed reports whether the compaction changed the view.
func (r Record) Changed(old View) bool { return r.View != old }

// Summarizer writes a summary of turns [from, to) that continues prev (the
// summary of what came before from, possibly empty).
type Summarizer func(ctx context.Context, prev string, from, to int) (string, error)

// Params is the input of Run.
type Params struct {
	Turns []Turn
	View  View // the current view
	// Fixed counts the characters of the system prompt and the tools.
	Fixed  int
	Budget Budget
	// KeepRecent is how many tool-result turns prune leaves whole.
	KeepRecent int
	// Tokens converts characters to tokens (Estimator.Tokens).
	Tokens func(chars int) int
	// Summarize writes summaries; nil skips the strategy.
	Summarize Summarizer
	// SummaryAttempts is how many times a failing summary is tried; 0 means 2.
	SummaryAttempts int
	Reason          string
}

// TooLargeError is returned when the view cannot be brought under the
// window: the request would still need Tokens tokens, of which Fixed are
// the system prompt and tools.
type TooLargeError struct {
	Tokens, Fixed, Window int
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("context: the request needs about %d tokens after every compaction strategy "+
		"(system prompt and tools %d, the latest turn %d) but the model's window is %d tokens: "+
		"use a model with a larger window, fewer tools, or smaller tool outputs",
		e.Tokens, e.Fixed, e.Tokens-e.Fixed, e.Window)
}

// Run compacts p.View: prune old tool results, then summarize the older
// turns, then trim the oldest turns after the summary, stopping as soon as
// the estimate is under Budget.Target (a requested compaction, or one
// after a context-length error, always summarizes). It never separates a tool call from its results: a view
// starts at a user or assistant turn, and pruning keeps every result,
// only shortening its body. It returns *TooLargeError when the result
// still exceeds Budget.Hard.
func Run(ctx context.Context, p Params) (Record, error) {
	tokens := func(v View) int { return p.Tokens(p.Fixed + v.Size(p.Turns)) }
	v := p.View
	rec := Record{Reason: p.Reason, TokensBefore: tokens(v)}
	// A requested compaction, or one after the provider refused a request
	// the estimate said fits, always summarizes.
	forced := p.Reason == ReasonRequested || p.Reason == ReasonContextLength
	fits := func() bool { return tokens(v) <= p.Budget.Target && !forced }

	keep := p.KeepRecent
	if keep <= 0 {
		keep = DefaultKeepRecentRounds
	}
	if pb := pruneBefore(p.Turns, keep); pb > v.PruneBefore {
		v.PruneBefore = pb
		rec.Strategies = append(rec.Strategies, StrategyPrune)
	}
	if !fits() && p.Summarize != nil {
		summarize(ctx, p, &v, &rec, forced)
	}
	if tokens(v) > p.Budget.Target && trim(p, &v) {
		rec.Strategies = append(rec.Strategies, StrategyTrim)
	}
	rec.View, rec.TokensAfter = v, tokens(v)
	if rec.TokensAfter > p.Budget.Hard {
		return rec, &TooLargeError{Tokens: rec.TokensAfter, Fixed: p.Tokens(p.Fixed), Window: p.Budget.Window}
	}
	return rec, nil
}

// PruneFits reports whether pruning alone brings the view under the
// target: when it does, nothing is lost (read_tool_output reads pruned
// results back), so a memory flush is not needed.
func PruneFits(p Params) bool {
	keep := p.KeepRecent
	if keep <= 0 {
		keep = DefaultKeepRecentRounds
	}
	v := p.View
	v.PruneBefore = max(v.PruneBefore, pruneBefore(p.Turns, keep))
	return p.Tokens(p.Fixed+v.Size(p.Turns)) <= p.Budget.Target
}

// summarize replaces the turns before the kept tail with a summary,
// trying p.SummaryAttempts times; a failure is noted and leaves v as is.
// The tail is the latest turns up to a third of the target, or only the
// latest round when forced.
func summarize(ctx context.Context, p Params, v *View, rec *Record, forced bool) {
	keepBudget := p.Budget.Target / 3 * CharsPerToken
	if forced {
		keepBudget = 0
	}
	to := keepFrom(p.Turns, *v, keepBudget)
	if to <= v.Start {
		return
	}
	attempts := p.SummaryAttempts
	if attempts <= 0 {
		attempts = 2
	}
	var err error
	for range attempts {
		var s string
		if s, err = p.Summarize(ctx, v.Summary, v.Start, to); err == nil && s != "" {
			next := *v
			next.Summary, next.SummaryThrough, next.Start = s, to, to
			if next.Size(p.Turns) >= v.Size(p.Turns) {
				rec.SummaryError = "the summary is longer than the turns it would replace"
				return
			}
			rec.Replaced = [2]int{v.Start, to}
			*v = next
			rec.Strategies = append(rec.Strategies, StrategySummarize)
			return
		}
		if err == nil {
			err = fmt.Errorf("the summary came back empty")
		}
		if ctx.Err() != nil {
			break
		}
	}
	rec.SummaryError = err.Error()
}

// trim moves the start past the oldest turns until the view fits the
// target or only the latest round is left, keeping the move only when it
// makes the request smaller. It reports whether it moved.
func trim(p Params, v *View) bool {
	t := *v
	for p.Tokens(p.Fixed+t.Size(p.Turns)) > p.Budget.Target {
		next := nextStart(p.Turns, t.Start)
		if next < 0 {
			break
		}
		t.Start = next
	}
	if t.Start == v.Start || t.Size(p.Turns) >= v.Size(p.Turns) {
		return false
	}
	*v = t
	return true
}
