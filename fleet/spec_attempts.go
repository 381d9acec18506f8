package fleet

import (
	"slices"
	"strconv"
	"strings"

	"github.com/google/uuid"
)

// Best-of-N: a spec with Attempts > 1 runs as N independent attempts of the
// same task and keeps one of them.
//
// The task itself runs no session: it is the coordinator of its attempts.
// Its worker creates N children (attempt 1..N), each a copy of the spec
// with its own fresh workspace (a clone of the same repository at the same
// ref), its attempt model and no delivery, then parks. Each attempt runs
// the whole task with its checks. The task keeps the winner:
//
//   - AttemptPickFirst (the default): the first attempt to succeed wins.
//     Succeeding means passing the spec's checks (an attempt whose checks
//     fail ends failed with checks_failed), so this is "the first to pass
//     its checks". The completer wakes the coordinator at that first pass
//     (WaitingFor.FirstPass), the coordinator cancels the others (reason
//     ReasonAttemptLost) and delivers the winner's changes. It is the
//     default because it answers soonest and spends least: the others stop
//     as soon as one attempt is good enough.
//   - AttemptPickCheapest: every attempt runs to its end; the succeeded one
//     with the lowest cost wins (ties: the one that ended first).
//
// The winner's result becomes the task's (final text, checks, structured
// answer), with TaskResult.Attempts recording every attempt and CostUSD the
// cost of all of them. With a delivery, the winner's changes (its "diff"
// artifact) are applied to a fresh clone in the coordinator's workspace and
// delivered from there; the diff is stored as the task's own. When every
// attempt ends without succeeding the task fails with ReasonAttemptsFailed,
// its error naming each attempt's reason.
//
// Attempts need workspaces of their own, so a spec with Attempts > 1 must
// run locally in a fresh workspace: an SSH environment or a working_dir is
// refused. Attempts are children of the task (one tree: cancelling the
// task cancels them), but do not count as subagents: they keep the task's
// depth, so each may spawn subagents as the task could.
const (
	// MaxAttempts bounds spec.attempts.
	MaxAttempts = 8
	// ReasonAttemptsFailed ends a best-of-N task none of whose attempts
	// succeeded; its error names each attempt's reason.
	ReasonAttemptsFailed = "attempts_failed"
	// ReasonAttemptLost cancels an attempt another attempt won over.
	ReasonAttemptLost = "attempt_lost"
)

// AttemptPick says which attempt of a best-of-N task wins.
type AttemptPick string

// Winner selections.
const (
	AttemptPickFirst    AttemptPick = "first"    // the first attempt to pass its checks (the default)
	AttemptPickCheapest AttemptPick = "cheapest" // the cheapest passing attempt, once all have ended
)

// BestOfN asks for N independent attempts of the task (see the comment
// above). Embedded in TaskSpec, so its fields sit at the spec's top level.
type BestOfN struct {
	// Attempts is how many attempts to run, 1..MaxAttempts; 0 or 1 runs
	// the task once, as usual.
	Attempts int `json:"attempts,omitempty"`
	// AttemptModels are the models of the attempts in order, repeated when
	// the list is shorter than Attempts; empty: every attempt uses Model.
	// Each must be one the workers allow (their allowed_models).
	AttemptModels []string `json:"attempt_models,omitempty"`
	// AttemptPick selects the winner: "first" (the default) or "cheapest".
	AttemptPick AttemptPick `json:"attempt_pick,omitempty"`
	// Attempt is set by the system on an attempt: its number, from 1.
	Attempt int `json:"attempt,omitempty"`
}

// Coordinates reports whether the task coordinates attempts instead of
// running a session of its own.
func (s TaskSpec) Coordinates() bool { return s.Attempts > 1 && s.Attempt == 0 }

// Pick is the spec's winner selection with its default.
func (b BestOfN) Pick() AttemptPick {
	if b.AttemptPick == "" {
		return AttemptPickFirst
	}
	return b.AttemptPick
}

// AttemptModel is the model of attempt i (from 1): AttemptModels in order,
// repeated, or model when the list is empty.
func (b BestOfN) AttemptModel(i int, model string) string {
	if len(b.AttemptModels) == 0 {
		return model
	}
	return b.AttemptModels[(i-1)%len(b.AttemptModels)]
}

// AttemptSpec is the spec of attempt i (from 1) of the coordinating task
// t: the task's own, with its attempt model, no delivery (the coordinator
// delivers the winner), a parent and root, and the same depth.
func (s TaskSpec) AttemptSpec(t, root uuid.UUID, i int) TaskSpec {
	a := s
	a.Model = s.AttemptModel(i, s.Model)
	a.BestOfN = BestOfN{Attempt: i}
	a.Delivery = nil
	a.ParentID, a.RootID = t, root
	a.IdempotencyKey = ""
	return a
}

// AttemptKey is the idempotency key of attempt i of task t: a coordinator
// run again creates the same attempts.
func AttemptKey(t uuid.UUID, i int) string { return "attempt:" + t.String() + ":" + strconv.Itoa(i) }

// AttemptsResult records the attempts of a best-of-N task
// (TaskResult.Attempts).
type AttemptsResult struct {
	Pick AttemptPick `json:"pick"`
	// Winner is the attempt whose result the task kept; Nil when none
	// succeeded.
	Winner  uuid.UUID        `json:"winner,omitzero"`
	Attempt int              `json:"attempt,omitempty"` // the winner's number
	Tried   []AttemptOutcome `json:"tried"`
}

// AttemptOutcome is how one attempt ended.
type AttemptOutcome struct {
	Attempt int       `json:"attempt"`
	TaskID  uuid.UUID `json:"task_id"`
	Model   string    `json:"model,omitempty"`
	State   string    `json:"state"`
	Reason  string    `json:"reason,omitempty"`
	CostUSD float64   `json:"cost_usd"`
}

// checkAttempts validates the best-of-N fields.
func (s TaskSpec) checkAttempts() *FieldError {
	b := s.BestOfN
	switch {
	case b.Attempts < 0 || b.Attempts > MaxAttempts:
		return fieldErr("attempts", "must be between 1 and %d, got %d", MaxAttempts, b.Attempts)
	case b.Attempt != 0 && s.ParentID == uuid.Nil:
		return fieldErr("attempt", "is set by the system on the attempts of a best-of-N task; remove it and set attempts instead")
	case b.Attempts <= 1 && (len(b.AttemptModels) > 0 || b.AttemptPick != ""):
		return fieldErr("attempts", "is %d; attempt_models and attempt_pick need attempts of 2 or more", b.Attempts)
	case len(b.AttemptModels) > b.Attempts:
		return fieldErr("attempt_models", "lists %d models for %d attempts; list at most one per attempt", len(b.AttemptModels), b.Attempts)
	case b.AttemptPick != "" && b.AttemptPick != AttemptPickFirst && b.AttemptPick != AttemptPickCheapest:
		return fieldErr("attempt_pick", "%q is unknown, want %q (the default) or %q", b.AttemptPick, AttemptPickFirst, AttemptPickCheapest)
	}
	for i, m := range b.AttemptModels {
		if strings.TrimSpace(m) == "" || len(m) > MaxNameBytes {
			return fieldErr("attempt_models", "[%d] must be a model name of 1 to %d bytes", i, MaxNameBytes)
		}
	}
	if b.Attempts > 1 && (s.Environment.Kind == EnvSSH || s.Environment.WorkingDir != "") {
		return fieldErr("attempts", "needs a fresh workspace per attempt: use a local environment with environment.repo (or none), not an SSH host or a working_dir")
	}
	return nil
}

// attemptReasons joins how each attempt ended, for ReasonAttemptsFailed.
func attemptReasons(tried []AttemptOutcome) string {
	parts := make([]string, 0, len(tried))
	for _, a := range tried {
		r := a.Reason
		if r == "" {
			r = a.State
		}
		parts = append(parts, "attempt "+strconv.Itoa(a.Attempt)+": "+r)
	}
	return strings.Join(parts, "; ")
}

// AttemptsFailedError is the error of a best-of-N task none of whose
// attempts succeeded.
func AttemptsFailedError(tried []AttemptOutcome) string {
	return "every attempt failed (" + attemptReasons(tried) + ")"
}

// SortAttempts orders outcomes by attempt number.
func SortAttempts(tried []AttemptOutcome) {
	slices.SortFunc(tried, func(a, b AttemptOutcome) int { return a.Attempt - b.Attempt })
}
