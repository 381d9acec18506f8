package worker

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/agent"
	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/extensions"
	"github.com/agentfleet/agentfleet/fleet/internal/settings"
	"github.com/agentfleet/agentfleet/fleet/models"
	"github.com/agentfleet/agentfleet/fleet/worker/internal/eventpump"
	"github.com/agentfleet/agentfleet/llm/ratelimit"
	"github.com/agentfleet/agentfleet/profiles"
	"github.com/agentfleet/agentfleet/store"
)

// errNotAllowed marks a spec this worker refuses (a permanent failure);
// package extensions returns it for MCP servers and hooks beyond bounds.
var errNotAllowed = extensions.ErrNotAllowed

// execute builds the session of a claimed task, runs it and says how to
// settle its delivery.
func (r *run) execute(ctx context.Context) settlement {
	w := r.w
	started := time.Now()
	w.metrics.sessionsRunning.Inc()
	defer w.metrics.sessionsRunning.Dec()
	if err := r.prepare(ctx); err != nil {
		return r.prepareFailed(ctx, err)
	}
	defer r.closeEnv()
	stopControl, err := w.q.ServeControl(fleet.SessionTenant(r.task), fleet.SessionSubject(r.task.ID), r.control)
	if err != nil {
		r.log.Warn("serving control", "err", err)
		return r.giveBack(ctx, w.backoff(r.d.NumDelivered))
	}
	// A cancel between the claim and ServeControl found no control
	// subscriber; the session learns of it at its first recorded turn,
	// whose append is fenced (turnRecorder), before any tool runs.
	hbDone := r.heartbeat(ctx)
	out, runErr := r.runSessionTraced(ctx) // tracing.go
	_ = stopControl()
	hbDone()
	_ = r.sess.Close() // SESSION_END closes the event subscription
	r.pump.Wait()
	s := r.settleOutcome(ctx, out, runErr)
	w.metrics.sessionDuration.Observe(time.Since(started).Seconds())
	return s
}

// prepare checks the spec against the worker's policy and builds the
// environment, model client, recorder, spawner, session and event pump.
func (r *run) prepare(ctx context.Context) error {
	w := r.w
	if len(w.cfg.AllowedProfiles) > 0 && !slices.Contains(w.cfg.AllowedProfiles, r.spec.Profile) {
		return fmt.Errorf("%w: profile %q (allowed: %v)", errNotAllowed, r.spec.Profile, w.cfg.AllowedProfiles)
	}
	if err := r.checkPolicy(); err != nil {
		return err
	}
	pc, err := models.Select(w.cfg.Providers, r.spec.Profile, r.spec.Session.Provider)
	if err != nil {
		return fmt.Errorf("%w: %v", errNotAllowed, err)
	}
	model := r.spec.Model
	if model == "" {
		model = pc.DefaultModel
	}
	if model != "" && len(w.cfg.AllowedModels) > 0 && !slices.Contains(w.cfg.AllowedModels, model) {
		return fmt.Errorf("%w: model %q (allowed: %v)", errNotAllowed, model, w.cfg.AllowedModels)
	}
	popts, err := r.profileOptions()
	if err != nil {
		return fmt.Errorf("%w: %v", errNotAllowed, err)
	}
	profile, err := profiles.ForProvider(r.spec.Profile, model, append(popts, pc.ProfileOptions()...)...)
	if err != nil {
		return fmt.Errorf("%w: %v", errNotAllowed, err)
	}
	if err := r.checkModels(profile.Model(), pc); err != nil {
		return err
	}
	client, err := w.models.Client(r.spec.Profile, r.spec.Session.Provider)
	if err != nil {
		return fmt.Errorf("%w: %v", errNotAllowed, err)
	}
	checker, err := r.permissions()
	if err != nil {
		return err
	}
	if err := r.checkDelivery(); err != nil {
		return err
	}
	if err := r.buildEnv(ctx); err != nil {
		return err
	}
	if err := r.restoreFromStore(ctx); err != nil { // gitstore.go
		return err
	}
	var create *store.CreateSessionParams
	if r.row, create, err = r.findSession(ctx, profile.ID(), profile.Model()); err != nil {
		return err
	}
	into := r.recordInto(pc)
	r.rec = newTurnRecorder(into, r.row, create)
	r.spawner = newSpawner(r)
	if r.ext, err = r.startExtensions(ctx); err != nil {
		return err
	}
	r.redact = w.redactor()
	cfg := agent.Config{
		Client: settings.Client(client, r.spec.Session.ProviderOptions), Profile: settings.Profile(profile, r.spec.Session.ProviderOptions), Env: r.env, ID: r.task.ID.String(), Model: profile.Model(),
		Depth: r.spec.Depth, Recorder: r.rec, Spawner: r.spawner, Clock: w.clock, Logger: r.log, Price: into.price,
		Session: r.sessionConfig(), Permissions: checker, Approver: r.approvals, Redactor: r.redact,
		DefaultMaxOutputTokens: w.cfg.MaxOutputTokens, ResultSchema: r.spec.ResultFormat(),
	}
	if notes := r.loadRepoMemory(ctx); notes != "" {
		cfg.Session.UserInstructions = strings.TrimSpace(cfg.Session.UserInstructions + "\n\n" + notes)
	}
	r.ext.Configure(&cfg)
	if r.spec.ParentID != uuid.Nil {
		cfg.ParentID = r.spec.ParentID.String()
	}
	sess, err := agent.Resume(ctx, cfg)
	if err != nil {
		return err
	}
	r.ext.Register(sess)
	r.pump, err = eventpump.Start(ctx, w.eventSink(), r.task, sess.Subscribe(), r.log, w.eventMetrics())
	if err != nil {
		_ = sess.Close()
		return err
	}
	r.checks = r.newChecks(sess)
	r.mu.Lock()
	r.sess = sess
	stop := r.stop
	r.mu.Unlock()
	r.notifyWorkspace()
	if stop != "" {
		r.abort(stop)
	}
	return nil
}

// sessionConfig maps the spec's limits and session settings onto the session.
func (r *run) sessionConfig() agent.SessionConfig {
	depth := r.spec.SubagentDepthLimit()
	if depth == 0 {
		depth = -1 // the agent reads 0 as its default; the spec's 0 forbids subagents
	}
	c := agent.SessionConfig{
		MaxTurns:              r.spec.Limits.MaxTurns,
		MaxToolRoundsPerInput: r.spec.Limits.MaxToolRounds,
		ReasoningEffort:       r.spec.ReasoningEffort,
		MaxSubagentDepth:      depth,
		Context:               contextConfig(r.spec.Context, r.w.cfg.Providers[r.spec.Profile]),
	}
	settings.Apply(&c, r.spec.Session)
	return c
}

// findSession returns the task's session row, or, when it has none yet,
// the row for the recorder to create with the session's first write (see
// turnRecorder). A task has exactly one session, whose id is the task id,
// so control requests address <prefix>.control.<tenant>.<task-id>. The first claim
// does not read: a task's session is created only by a run of the task.
func (r *run) findSession(ctx context.Context, profileID, model string) (store.Session, *store.CreateSessionParams, error) {
	create := &store.CreateSessionParams{ID: r.task.ID, TaskID: r.task.ID,
		Profile: profileID, Provider: profileID, Model: model, State: string(agent.StateIdle)}
	if r.task.Attempts == 1 {
		return store.Session{}, create, nil
	}
	s, err := r.w.st.GetSession(ctx, store.GetSessionParams{ID: r.task.ID})
	if errors.Is(err, store.ErrNotFound) {
		return store.Session{}, create, nil
	}
	return s, nil, err
}

// runSession submits the prompt to a new session, continues a resumed
// one, or runs new input given to one that had ended (see
// runWithInputs), bounded by the spec's wall time.
func (r *run) runSession(ctx context.Context) (agent.Outcome, error) {
	ctx = models.WithNotifier(ctx, r.notify)
	ctx = ratelimit.WithTenant(ctx, r.task.Tenant) // a tenant's share of the rate limits
	if wt := time.Duration(r.spec.Limits.WallTime); wt > 0 {
		start := r.task.StartedAt
		if start.IsZero() {
			start = time.Now()
		}
		t := time.AfterFunc(time.Until(start.Add(wt)), func() { r.abort(stopWallTime) })
		defer t.Stop()
	}
	in, err := r.loadInputs(ctx)
	if err != nil {
		return agent.Outcome{}, err
	}
	r.checkBefore(ctx)
	out, err := r.runWithInputs(ctx, in)
	out, err = r.runLeftoverSteering(ctx, out, err)
	out, err = r.verify(ctx, out, err)
	r.markDelivered(ctx, in)
	return out, err
}

// runLeftoverSteering runs, as new inputs, steering that arrived while the
// model gave its final answer: the session would keep it for a next input,
// and this run is about to end.
func (r *run) runLeftoverSteering(ctx context.Context, out agent.Outcome, err error) (agent.Outcome, error) {
	for err == nil && r.stopReason() == "" && (out.Stop == agent.StopCompleted || out.Stop == agent.StopAwaitingInput) {
		msgs := r.sess.TakeSteering()
		if len(msgs) == 0 {
			break
		}
		for _, m := range msgs[1:] {
			if err := r.sess.FollowUp(m); err != nil {
				return out, err
			}
		}
		out, err = r.sess.Submit(ctx, msgs[0])
	}
	return out, err
}

// heartbeat stamps the task's heartbeat until the returned stop is called.
// A lost ownership (the task was cancelled, or taken over) aborts the
// session.
func (r *run) heartbeat(ctx context.Context) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(r.w.cfg.HeartbeatInterval)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
			}
			_, err := r.w.st.HeartbeatTask(ctx, store.HeartbeatTaskParams{ID: r.task.ID, WorkerID: r.w.cfg.ID})
			r.w.health.Observe(err)
			if errors.Is(err, store.ErrConflict) {
				r.abort(r.lostReason(ctx))
				return
			}
		}
	}()
	return func() { close(done); <-finished }
}

// lostReason reads why the task is no longer ours.
func (r *run) lostReason(ctx context.Context) string {
	t, err := r.w.st.GetTask(ctx, store.GetTaskParams{ID: r.task.ID})
	if err == nil && t.State == store.TaskCancelled {
		return stopCancelled
	}
	return stopLost
}

func (r *run) closeEnv() {
	_ = r.ext.Close()
	defer r.image.Release()
	defer r.ws.close()
	if r.env == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = r.env.Cleanup(ctx)
}

// prepareFailed settles a task whose session could not be built: a spec
// this worker refuses fails for good; anything else (a host that does not
// answer, a store hiccup) is handed back for another try.
func (r *run) prepareFailed(ctx context.Context, err error) settlement {
	r.closeEnv()
	r.log.Warn("preparing the session", "err", err)
	var fe *fleet.FieldError
	switch {
	case errors.Is(err, errNotAllowed):
		return r.fail(ctx, fleet.ReasonNotAllowed, err.Error())
	case errors.Is(err, errUnpriced):
		return r.fail(ctx, fleet.ReasonUnpricedModel, err.Error())
	case errors.Is(err, errDelivery):
		return r.fail(ctx, fleet.ReasonDelivery, err.Error())
	case errors.As(err, &fe), errors.Is(err, errBadEnvironment):
		return r.fail(ctx, fleet.ReasonEnvironment, err.Error())
	}
	return r.giveBack(ctx, r.w.backoff(r.d.NumDelivered))
}
