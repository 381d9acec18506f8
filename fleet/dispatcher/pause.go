package dispatcher

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/fleet/api"
	"github.com/agentfleet/agentfleet/fleet/internal/holds"
	"github.com/agentfleet/agentfleet/fleet/internal/taskops"
	"github.com/agentfleet/agentfleet/store"
)

// Pauses (fleet/internal/holds has the design):
//
//   - a bulk pause puts its filter in force as a standing rule, within the
//     tenants the caller submits to: every root task the filter selects
//     that has not started is held, those queued now and those submitted
//     later, until a resume with the same filter (and scope) ends the rule;
//   - a queue pause (PauseQueue, admin only) stops every worker pulling
//     the queue;
//   - every dispatcher watches the pauses and starts again, through the
//     router, each held task no rule holds any more, in the order of its
//     original message. A release cut short by a restart is finished by
//     the next dispatcher to start (the records stay until released), and
//     dispatchers releasing together publish each start once (its message
//     id carries the hold record's revision).

// errNoHolds answers pause calls when the pauses cannot be opened.
var errNoHolds = errors.New("dispatcher: the pauses (NATS bucket holds) cannot be opened")

// ErrNoPause is a resume naming no pause in force.
var ErrNoPause = errors.New("no pause in force matches")

// moveSweep is how often the release loop also forgets the priority moves
// of tasks that are no longer queued (priority_bulk.go).
const moveSweep = 30 * time.Second

// holdRetry is how long the release loop waits after a failure (the
// store or NATS away) before it tries again.
const holdRetry = time.Second

// pauses returns the pauses, opening them the first time (Run or the
// first API call, whichever comes first).
func (d *Dispatcher) pauses(ctx context.Context) (*holds.Set, error) {
	d.holdsMu.Lock()
	defer d.holdsMu.Unlock()
	if d.holds != nil {
		return d.holds, nil
	}
	s, err := holds.Open(ctx, d.queue)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errNoHolds, err)
	}
	d.holds = s
	return s, nil
}

// runHolds opens the pauses and releases held tasks until ctx ends; the
// returned stop waits for the loop and closes them.
func (d *Dispatcher) runHolds(ctx context.Context) (stop func(), err error) {
	s, err := d.pauses(ctx)
	if err != nil {
		return nil, err
	}
	done := make(chan struct{})
	sweep := time.NewTicker(moveSweep)
	still := &stillHeld{}
	go func() {
		defer close(done)
		defer sweep.Stop()
		forget := true // the moves: at start, then at each sweep
		for {
			wait := s.Changed() // before the pass: a change during it runs another
			if err := d.releaseHeld(ctx, s, still, forget); err != nil && ctx.Err() == nil {
				d.log.Warn("releasing paused tasks", "err", err)
				t := time.NewTimer(holdRetry)
				select {
				case <-ctx.Done():
				case <-t.C:
				}
				t.Stop()
				continue
			}
			forget = false
			select {
			case <-ctx.Done():
				return
			case <-wait:
			case <-sweep.C: // moves of tasks that have started since
				forget = true
			}
		}
	}()
	return func() {
		<-done
		d.holdsMu.Lock()
		d.holds = nil
		d.holdsMu.Unlock()
		s.Close()
	}, nil
}

// stillHeld remembers the hold records found still held under one version
// of the rules, so that each pass reads only the records that are new
// since (a pass per record a worker writes would read every held task
// again). A change of the rules forgets them all.
type stillHeld struct {
	version uint64
	revs    map[uuid.UUID]uint64
}

func (sh *stillHeld) reset(version uint64) {
	if sh.revs == nil || sh.version != version {
		sh.version, sh.revs = version, map[uuid.UUID]uint64{}
	}
}

// releaseHeld starts again, in order, every held task no rule holds, and
// drops the records of held tasks that are no longer queued (cancelled
// meanwhile, say); with forget, also the move records of tasks no longer
// queued. Moves are forgotten only at start and at each moveSweep, not at
// every change of the bucket: each reads every moved task, and a bulk
// set_priority of N tasks writes N records, each a change.
func (d *Dispatcher) releaseHeld(ctx context.Context, s *holds.Set, still *stillHeld, forget bool) error {
	if forget {
		if err := d.forgetMoves(ctx, s); err != nil {
			return err
		}
	}
	still.reset(s.RulesVersion())
	for _, h := range s.Held() {
		if ctx.Err() != nil {
			return ctx.Err() // the loop ends with ctx
		}
		if still.revs[h.TaskID] == h.Revision {
			continue
		}
		t, err := d.store.GetTask(ctx, store.GetTaskParams{ID: h.TaskID})
		switch {
		case errors.Is(err, store.ErrNotFound):
			if err := s.Released(ctx, h); err != nil {
				return err
			}
			continue
		case err != nil:
			return fmt.Errorf("reading held task %s: %w", h.TaskID, err)
		}
		if _, held := s.Holding(t); held {
			still.revs[t.ID] = h.Revision
			continue
		}
		if t.State == store.TaskQueued {
			o := taskops.HoldReleaseMessage(t, h.Revision, time.Now())
			if _, err := d.queue.Send(ctx, o.To, o.Msg, o.MsgID); err != nil {
				return fmt.Errorf("starting held task %s: %w", t.ID, err)
			}
			d.log.Debug("held task released", "task_id", t.ID)
		}
		if err := s.Released(ctx, h); err != nil {
			return err
		}
	}
	return nil
}

// forgetMoves drops the move records of tasks no longer queued.
func (d *Dispatcher) forgetMoves(ctx context.Context, s *holds.Set) error {
	for _, m := range s.Moves() {
		t, err := d.store.GetTask(ctx, store.GetTaskParams{ID: m.TaskID})
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("reading moved task %s: %w", m.TaskID, err)
		}
		if err == nil && t.State == store.TaskQueued {
			continue
		}
		if err := s.DropMove(ctx, m); err != nil {
			return err
		}
	}
	return nil
}

// PauseQueue stops every worker pulling queue q until ResumeQueue; the
// tasks queued there keep their place.
func (d *Dispatcher) PauseQueue(ctx context.Context, q, reason string) (api.PauseView, error) {
	s, err := d.pauses(ctx)
	if err != nil {
		return api.PauseView{}, err
	}
	r := holds.QueueRule(q, submitter(ctx), reason)
	if err := s.Pause(ctx, r); err != nil {
		return api.PauseView{}, err
	}
	return pauseView(r.Key(), r), nil
}

// ResumeQueue ends the pause of queue q; ErrNoPause when it was not
// paused.
func (d *Dispatcher) ResumeQueue(ctx context.Context, q string) error {
	s, err := d.pauses(ctx)
	if err != nil {
		return err
	}
	ok, err := s.Unpause(ctx, holds.QueueRule(q, "", "").Key())
	if err == nil && !ok {
		err = fmt.Errorf("queue %q: %w (it is not paused)", q, ErrNoPause)
	}
	return err
}

// Pauses lists the pauses in force within tenants (nil: every one): the
// queue pauses, and the filter pauses whose scope lies within tenants;
// Held counts the held tasks of those tenants.
func (d *Dispatcher) Pauses(ctx context.Context, tenants []string) (api.PausesView, error) {
	s, err := d.pauses(ctx)
	if err != nil {
		return api.PausesView{}, err
	}
	out := api.PausesView{Pauses: []api.PauseView{}}
	for key, r := range s.Rules() {
		if r.Queue == "" && !within(r.Tenants, tenants) {
			continue
		}
		out.Pauses = append(out.Pauses, pauseView(key, r))
	}
	for _, h := range s.Held() {
		if tenants == nil || slices.Contains(tenants, h.Tenant) {
			out.Held++
		}
	}
	return out, nil
}

func pauseView(key string, r holds.Rule) api.PauseView {
	v := api.PauseView{ID: key, Queue: r.Queue, Tenants: r.Tenants, By: r.By, At: r.At, Reason: r.Reason}
	if r.Queue == "" {
		f := r.Filter
		v.Filter = &f
	}
	return v
}

// within reports whether scope (nil: every tenant) lies within tenants
// (nil: every tenant).
func within(scope, tenants []string) bool {
	if tenants == nil {
		return true
	}
	if scope == nil {
		return false
	}
	for _, t := range scope {
		if !slices.Contains(tenants, t) {
			return false
		}
	}
	return true
}

// bulkPause puts f in force as a pause within sc's tenants; the job
// counts the queued tasks it holds now (later ones are held too).
func (d *Dispatcher) bulkPause(ctx context.Context, j *bulkJob, reason string, f api.BulkFilter, sc bulkScope) error {
	s, err := d.pauses(ctx)
	if err != nil {
		return err
	}
	r := holds.Rule{Filter: f, Tenants: sc.Tenants, By: j.view.Principal, At: time.Now().UTC(), Reason: reason}
	if err := s.Pause(ctx, r); err != nil {
		return err
	}
	d.bulk.update(j, func(v *api.BulkJob) { v.PauseID = r.Key() })
	return d.eachBulkPage(ctx, api.BulkPause, f, sc, func(ts []store.Task) error {
		d.bulk.update(j, func(v *api.BulkJob) { v.Matched += len(ts); v.Done += len(ts); v.Paused += len(ts) })
		return nil
	})
}

// bulkResume ends the pause of f within sc's tenants; the job counts the
// queued tasks it selects, which start again (the held ones through the
// release loop). They are counted before the pause ends: once it has,
// the release loop starts them and they leave the queued state.
func (d *Dispatcher) bulkResume(ctx context.Context, j *bulkJob, f api.BulkFilter, sc bulkScope) error {
	s, err := d.pauses(ctx)
	if err != nil {
		return err
	}
	key := holds.Rule{Filter: f, Tenants: sc.Tenants}.Key()
	if _, in := s.Rules()[key]; !in {
		return noPause()
	}
	d.bulk.update(j, func(v *api.BulkJob) { v.PauseID = key })
	if err := d.eachBulkPage(ctx, api.BulkResume, f, sc, func(ts []store.Task) error {
		d.bulk.update(j, func(v *api.BulkJob) { v.Matched += len(ts); v.Done += len(ts); v.Resumed += len(ts) })
		return nil
	}); err != nil {
		return err
	}
	ok, err := s.Unpause(ctx, key)
	if err != nil {
		return err
	}
	if !ok {
		return noPause()
	}
	return nil
}

// noPause is the error of a resume whose filter no pause has.
func noPause() error {
	return fmt.Errorf("%w this filter within your tenants (GET /v1/pauses lists them; resume with the filter the pause was made with)", ErrNoPause)
}
