package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/execenv"
	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/delivery"
	"github.com/agentfleet/agentfleet/fleet/internal/taskops"
	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/store"
)

// coordinate runs a best-of-N task (fleet.BestOfN): it has no session of
// its own. Its first run creates the attempts (children with idempotency
// keys, so a run again finds the same ones) and parks on them; the
// completer wakes it at the first attempt that succeeds (attempt_pick
// "first") or once all have ended ("cheapest"). The run that finds a
// winner cancels the other attempts, delivers the winner's changes (or only
// records its result, without a delivery) and ends the task through the
// completer; with no winner the task fails with attempts_failed.
func (r *run) coordinate(ctx context.Context) settlement {
	for _, check := range []func() error{r.checkProfile, r.checkPolicy, r.checkAttempts, r.checkDelivery} {
		if err := check(); err != nil {
			return r.prepareFailed(ctx, err) // a refusal fails the task before any attempt exists
		}
	}
	hbDone := r.heartbeat(ctx)
	defer hbDone()
	kids, err := r.startAttempts(ctx)
	if err != nil {
		r.log.Warn("starting the attempts; handing back", "err", err)
		return r.giveBack(ctx, r.w.backoff(r.d.NumDelivered))
	}
	winner, over := pickAttempt(r.spec.Pick(), kids)
	if !over {
		return r.parkOnAttempts(ctx, kids)
	}
	tried := attemptOutcomes(kids)
	if winner == nil {
		res := fleet.TaskResult{Error: fleet.AttemptsFailedError(tried),
			Attempts: &fleet.AttemptsResult{Pick: r.spec.Pick(), Tried: tried}}
		res.Usage, res.CostUSD = attemptTotals(kids)
		return r.endCoordinator(ctx, taskops.Failed(r.task.ID, r.w.cfg.ID, fleet.ReasonAttemptsFailed, res))
	}
	r.cancelLosers(ctx, kids, winner.ID)
	return r.keepWinner(ctx, *winner, kids, tried)
}

// checkProfile refuses a profile outside the worker's allowed_profiles.
func (r *run) checkProfile() error {
	if p := r.w.cfg.AllowedProfiles; len(p) > 0 && !slices.Contains(p, r.spec.Profile) {
		return fmt.Errorf("%w: profile %q (allowed: %v)", errNotAllowed, r.spec.Profile, p)
	}
	return nil
}

// checkAttempts refuses attempt models outside the worker's allowed_models
// before any attempt exists.
func (r *run) checkAttempts() error {
	allowed := r.w.cfg.AllowedModels
	for i := 1; i <= r.spec.Attempts; i++ {
		m := r.spec.AttemptModel(i, r.spec.Model)
		if m != "" && len(allowed) > 0 && !slices.Contains(allowed, m) {
			return fmt.Errorf("%w: attempt %d's model %q (allowed: %v)", errNotAllowed, i, m, allowed)
		}
	}
	return nil
}

// startAttempts creates the task's attempts that do not exist yet and
// enqueues those still queued (a repeated start is a duplicate), returning
// them in attempt order.
func (r *run) startAttempts(ctx context.Context) ([]store.Task, error) {
	kids := make([]store.Task, 0, r.spec.Attempts)
	for i := 1; i <= r.spec.Attempts; i++ {
		body, err := json.Marshal(r.spec.AttemptSpec(r.task.ID, r.task.RootID, i))
		if err != nil {
			return nil, err
		}
		res, err := r.w.st.CreateTask(ctx, store.CreateTaskParams{ParentID: r.task.ID, Queue: r.spec.Queue,
			Priority: r.spec.Priority, Spec: body, IdempotencyKey: fleet.AttemptKey(r.task.ID, i), Labels: r.task.Labels})
		if err != nil {
			return nil, fmt.Errorf("creating attempt %d: %w", i, err)
		}
		if res.Task.State == store.TaskQueued {
			o := taskops.StartMessage(res.Task, time.Time{})
			if _, err := r.w.q.Send(ctx, o.To, o.Msg, o.MsgID); err != nil {
				return nil, fmt.Errorf("enqueueing attempt %d: %w", i, err)
			}
		}
		kids = append(kids, res.Task)
	}
	return kids, nil
}

// pickAttempt returns the winner among the attempts and whether the wait
// is over. "first": the succeeded attempt that ended first; over once one
// succeeded or all ended. "cheapest": once all ended, the succeeded one of
// the lowest cost (ties: the one that ended first). A nil winner of an
// ended wait means no attempt succeeded.
func pickAttempt(pick fleet.AttemptPick, kids []store.Task) (*store.Task, bool) {
	var win *store.Task
	var winCost float64
	all := true
	for i := range kids {
		k := &kids[i]
		all = all && k.State.Terminal()
		if k.State != store.TaskSucceeded {
			continue
		}
		cost := attemptCost(*k)
		better := win == nil || k.FinishedAt.Before(win.FinishedAt)
		if pick == fleet.AttemptPickCheapest && win != nil && cost != winCost {
			better = cost < winCost
		}
		if better {
			win, winCost = k, cost
		}
	}
	if pick == fleet.AttemptPickCheapest {
		return win, all
	}
	return win, all || win != nil
}

func attemptCost(t store.Task) float64 {
	res, _ := fleet.DecodeResult(t.Result)
	return res.CostUSD
}

// attemptOutcomes is how each attempt stands, in attempt order.
func attemptOutcomes(kids []store.Task) []fleet.AttemptOutcome {
	out := make([]fleet.AttemptOutcome, 0, len(kids))
	for i, k := range kids {
		spec, _ := fleet.DecodeSpec(k.Spec)
		n := spec.Attempt
		if n == 0 {
			n = i + 1
		}
		out = append(out, fleet.AttemptOutcome{Attempt: n, TaskID: k.ID, Model: spec.Model,
			State: string(k.State), Reason: k.Error, CostUSD: attemptCost(k)})
	}
	fleet.SortAttempts(out)
	return out
}

// attemptTotals sums the usage and cost of every attempt.
func attemptTotals(kids []store.Task) (u llm.Usage, cost float64) {
	for _, k := range kids {
		res, _ := fleet.DecodeResult(k.Result)
		u = u.Add(res.Usage)
		cost += res.CostUSD
	}
	return u, cost
}

// parkOnAttempts parks the task until its attempts decide (see
// pickAttempt): waiting, with a FirstPass wait for "first".
func (r *run) parkOnAttempts(ctx context.Context, kids []store.Task) settlement {
	wf := fleet.WaitingFor{WaitID: strconv.Itoa(r.task.Attempts), FirstPass: r.spec.Pick() == fleet.AttemptPickFirst}
	for _, k := range kids {
		wf.Children = append(wf.Children, k.ID)
	}
	body, _ := json.Marshal(wf)
	_, err := r.w.st.TransitionTask(ctx, store.TransitionTaskParams{ID: r.task.ID, From: store.TaskRunning,
		To: store.TaskWaiting, WorkerID: r.w.cfg.ID, WaitingFor: body})
	if err != nil {
		if errors.Is(err, store.ErrConflict) { // cancelled meanwhile
			return ack()
		}
		r.log.Warn("parking on the attempts; handing back", "err", err)
		return r.giveBack(ctx, r.w.backoff(r.d.NumDelivered))
	}
	r.w.metrics.parks.Inc()
	if _, err := r.w.ends.ResumeIfDone(ctx, r.task, wf, uuid.Nil); err != nil {
		r.log.Warn("resuming after attempts that already decided", "err", err)
	}
	return ack()
}

// cancelLosers cancels every live attempt but the winner.
func (r *run) cancelLosers(ctx context.Context, kids []store.Task, winner uuid.UUID) {
	for _, k := range kids {
		if k.ID == winner || k.State.Terminal() {
			continue
		}
		res, err := r.w.ends.CancelTree(ctx, k.ID, fleet.ReasonAttemptLost)
		if err == nil {
			err = res.AbortErr
		}
		if err != nil {
			r.log.Warn("cancelling an attempt that lost", "attempt_task_id", k.ID, "err", err)
		}
	}
}

// keepWinner ends the task with the winner's result. With a delivery, the
// winner's changes are applied to a fresh clone in the task's own
// workspace, stored as its diff and delivered from there; without one the
// winner's diff is stored as the task's.
func (r *run) keepWinner(ctx context.Context, win store.Task, kids []store.Task, tried []fleet.AttemptOutcome) settlement {
	res, _ := fleet.DecodeResult(win.Result)
	res.Success, res.Error, res.Delivery = true, "", nil
	att := &fleet.AttemptsResult{Pick: r.spec.Pick(), Winner: win.ID, Tried: tried}
	for _, a := range tried {
		if a.TaskID == win.ID {
			att.Attempt = a.Attempt
		}
	}
	res.Attempts = att
	res.Usage, res.CostUSD = attemptTotals(kids)
	if r.spec.Delivery == nil {
		r.copyDiff(ctx, win.ID)
		return r.endCoordinator(ctx, taskops.Succeeded(r.task.ID, r.w.cfg.ID, res))
	}
	if err := r.buildEnv(ctx); err != nil {
		return r.prepareFailed(ctx, err)
	}
	defer r.closeEnv()
	if err := r.applyWinner(ctx, win.ID); err != nil {
		res.Success, res.Error = false, "delivery: "+err.Error()
		return r.endCoordinator(ctx, taskops.Failed(r.task.ID, r.w.cfg.ID, fleet.ReasonDelivery, res))
	}
	r.writeDiff(ctx)
	d, temporary := delivery.Deliver(ctx, delivery.Request{Dir: r.ws.dir, TaskID: r.task.ID, Created: r.task.CreatedAt,
		Spec: *r.spec.Delivery, Repo: r.spec.Environment.Repo, Ref: r.spec.Environment.Ref, Answer: res.FinalText,
		Checks: res.Checks, Creds: deliveryCreds{&r.w.cfg}, Config: r.w.cfg.Delivery, Store: r.w.st,
		AllowPrivate: r.w.cfg.allowPrivate()})
	res.Delivery = &d
	if body, err := json.Marshal(d); err == nil {
		if err := r.w.eventSink().PublishAfterLast(ctx, r.task, fleet.KindDelivery, body); err != nil {
			r.log.Warn("publishing the DELIVERY event", "err", err)
		}
	}
	switch {
	case temporary && int(r.d.NumDelivered) < r.w.q.Config().MaxDeliver:
		r.log.Info("a temporary delivery error; handing the task back", "err", d.Error)
		return r.giveBack(ctx, r.w.backoff(r.d.NumDelivered))
	case d.Error != "":
		res.Success, res.Error = false, "delivery: "+d.Error
		return r.endCoordinator(ctx, taskops.Failed(r.task.ID, r.w.cfg.ID, fleet.ReasonDelivery, res))
	}
	s := r.endCoordinator(ctx, taskops.Succeeded(r.task.ID, r.w.cfg.ID, res))
	r.cleanupWorkspace(true)
	return s
}

// copyDiff stores the winner's diff as the task's own.
func (r *run) copyDiff(ctx context.Context, win uuid.UUID) {
	a, err := r.w.st.GetArtifact(ctx, store.GetArtifactParams{TaskID: win, Kind: "diff"})
	if err != nil {
		return
	}
	_, err = r.w.st.PutArtifact(ctx, store.PutArtifactParams{TaskID: r.task.ID, Kind: "diff",
		ContentType: a.ContentType, Content: a.Content})
	if err != nil {
		r.log.Warn("storing the winning attempt's diff", "err", err)
	}
}

// endCoordinator ends the task through the completer; the completer
// announces the end (SESSION_END) and cancels what is left of the tree.
func (r *run) endCoordinator(ctx context.Context, e taskops.End) settlement {
	if _, err := r.w.ends.End(ctx, e); err != nil {
		r.log.Warn("ending a best-of-N task; handing back", "err", err)
		return nak(r.w.backoff(r.d.NumDelivered))
	}
	return ack()
}

// attemptPatch is where the winner's diff waits, inside the clone's .git
// (never part of the delivered tree), for `git apply`.
const attemptPatch = ".git/agentfleet-attempt.patch"

// applyWinner applies the winner's "diff" artifact to the coordinator's
// fresh clone, inside the task's environment (its sandbox). No artifact
// means the winner changed nothing.
func (r *run) applyWinner(ctx context.Context, win uuid.UUID) error {
	a, err := r.w.st.GetArtifact(ctx, store.GetArtifactParams{TaskID: win, Kind: "diff"})
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(r.ws.dir, attemptPatch), a.Content, 0o644); err != nil {
		return err
	}
	res, err := r.env.Exec(ctx, execenv.ExecRequest{Timeout: time.Minute,
		Command: "git apply --whitespace=nowarn " + attemptPatch + "; rc=$?; rm -f " + attemptPatch + "; exit $rc"})
	if err != nil {
		return err
	}
	if res.ExitCode != 0 {
		return fmt.Errorf("git apply of the winning attempt's diff: exit %d: %s", res.ExitCode, res.Stderr)
	}
	return nil
}
