package dispatcher

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/api"
	"github.com/agentfleet/agentfleet/fleet/internal/taskops"
	"github.com/agentfleet/agentfleet/store"
)

// A task's rounds (GET /v1/tasks/{id}/rounds, the dashboard's history):
// round 1 is its first run, triggered by what submitted it (a schedule,
// a forge, by its labels; else the API); each reopening (reopen.go) is
// the next round, at its stored input. What triggered a reopening is
// recorded by Reopen as an artifact of kind RoundKind named after the
// input, when ctx carries a trigger (WithRoundTrigger: the follow-up
// route sets TriggerAPI). A round without that record, followed by a
// forge event record (kind "forge_event", whose content is its cause,
// forges*.go) before the next round, was triggered by that forge event;
// CI repairs are forge rounds of cause api.CauseCI. Otherwise it counts
// as an API follow-up.
//
// The pull request is the one the task's result names, "open" until a
// forge says it was merged or closed (the artifact "outcome/pull_request",
// which alone names it, by number, once a reopening cleared the result).

// RoundKind is the artifact kind of the trigger records of rounds.
const RoundKind = "round"

type roundTriggerKey struct{}

// RoundTrigger says what triggered a reopening.
type RoundTrigger struct {
	Trigger string `json:"trigger"` // api.TriggerAPI, api.TriggerForge...
	Cause   string `json:"cause,omitempty"`
	Detail  string `json:"detail,omitempty"`
	By      string `json:"by,omitempty"`
}

// WithRoundTrigger returns ctx carrying tr, which Reopen records as the
// trigger of the round it starts.
func WithRoundTrigger(ctx context.Context, tr RoundTrigger) context.Context {
	return context.WithValue(ctx, roundTriggerKey{}, tr)
}

// recordRound stores the trigger of round n of t (started by the input
// named input) when ctx carries one. A failure is logged: the round ran.
func (d *Dispatcher) recordRound(ctx context.Context, t store.Task, input string) {
	tr, ok := ctx.Value(roundTriggerKey{}).(RoundTrigger)
	if !ok {
		return
	}
	if tr.By == "" {
		tr.By = submitter(ctx)
	}
	raw, _ := json.Marshal(tr) // plain strings
	if _, err := d.store.PutArtifact(ctx, store.PutArtifactParams{TaskID: t.ID, Kind: RoundKind, Name: input,
		ContentType: "application/json", Content: raw}); err != nil {
		d.log.Warn("recording what triggered a round", "task_id", t.ID, "err", err)
	}
}

// roundReads is what taskRounds reads of the store.
type roundReads interface {
	ListArtifacts(ctx context.Context, p store.ListArtifactsParams) ([]store.Artifact, error)
	GetArtifact(ctx context.Context, p store.GetArtifactParams) (store.Artifact, error)
}

// taskRounds lists t's rounds and its pull request.
func taskRounds(ctx context.Context, st roundReads, t store.Task) (api.RoundList, error) {
	arts, err := st.ListArtifacts(ctx, store.ListArtifactsParams{TaskID: t.ID})
	if err != nil {
		return api.RoundList{}, err
	}
	slices.SortStableFunc(arts, func(a, b store.Artifact) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), strings.Compare(a.Name, b.Name))
	})
	out := api.RoundList{Rounds: []api.Round{firstRound(t)}}
	var inputs []store.Artifact
	if t.ParentID == uuid.Nil { // a child's inputs are send_input, not rounds
		for _, a := range arts {
			if a.Kind == taskops.InputKind {
				inputs = append(inputs, a)
			}
		}
	}
	for i, in := range inputs {
		r := api.Round{Round: i + 2, Trigger: api.TriggerAPI, At: in.CreatedAt, Input: in.Name}
		if rec, err := st.GetArtifact(ctx, store.GetArtifactParams{TaskID: t.ID, Kind: RoundKind, Name: in.Name}); err == nil {
			var tr RoundTrigger
			if json.Unmarshal(rec.Content, &tr) == nil && tr.Trigger != "" {
				r.Trigger, r.Cause, r.Detail, r.By = tr.Trigger, tr.Cause, tr.Detail, tr.By
			}
		} else if !errors.Is(err, store.ErrNotFound) {
			return api.RoundList{}, err
		} else if ev, ok := forgeEventAfter(arts, in, inputs[i+1:]); ok {
			cause, err := st.GetArtifact(ctx, store.GetArtifactParams{TaskID: t.ID, Kind: ForgeEventKind, Name: ev.Name})
			if err != nil {
				return api.RoundList{}, err
			}
			r.Trigger, r.Cause, r.Detail = api.TriggerForge, string(cause.Content), t.Labels["forge"]
		}
		out.Rounds = append(out.Rounds, r)
	}
	out.PullRequest, err = pullRequestState(ctx, st, t)
	return out, err
}

// firstRound is round 1 of t, triggered by what submitted it.
func firstRound(t store.Task) api.Round {
	r := api.Round{Round: 1, Trigger: api.TriggerAPI, By: t.SubmittedBy, At: t.CreatedAt}
	switch {
	case t.Labels[ScheduleLabel] != "":
		r.Trigger, r.Detail = api.TriggerSchedule, t.Labels[ScheduleLabel]
	case t.Labels["forge"] != "":
		r.Trigger, r.Cause = api.TriggerForge, "label"
		r.Detail = t.Labels["forge"] + " " + t.Labels["forge_repo"]
		if n := t.Labels["forge_issue"]; n != "" {
			r.Detail += "#" + n
		}
	}
	return r
}

// forgeEventAfter finds the first forge event record made at or after
// input in and before the next input (later).
func forgeEventAfter(arts []store.Artifact, in store.Artifact, later []store.Artifact) (store.Artifact, bool) {
	for _, a := range arts {
		if a.Kind != ForgeEventKind || a.CreatedAt.Before(in.CreatedAt) {
			continue
		}
		if len(later) > 0 && !a.CreatedAt.Before(later[0].CreatedAt) {
			break
		}
		return a, true
	}
	return store.Artifact{}, false
}

// pullRequestState is the pull request of t's result, if any, with what
// its forge said of it.
func pullRequestState(ctx context.Context, st roundReads, t store.Task) (*api.PullRequestState, error) {
	var pr *api.PullRequestState
	if res, ok := fleet.DecodeResult(t.Result); ok && res.Delivery != nil && res.Delivery.RequestURL != "" {
		pr = &api.PullRequestState{URL: res.Delivery.RequestURL, Number: res.Delivery.RequestNumber, State: "open"}
	}
	o, err := taskOutcome(ctx, st, t.ID)
	if err != nil {
		return nil, fmt.Errorf("task %s: its pull request's outcome: %w", t.ID, err)
	}
	if o.Outcome == "" {
		return pr, nil
	}
	if pr == nil { // reopened since it delivered: the result is gone, the record stays
		pr = &api.PullRequestState{Number: o.PullRequest}
	}
	pr.State = o.Outcome
	return pr, nil
}
