package dispatcher

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/api"
	"github.com/agentfleet/agentfleet/store"
)

// Bulk actions act on every task a filter selects (POST /v1/tasks/bulk):
//
//   - retry submits a new attempt of each matching ended root task (a
//     child is retried by retrying its root): the same spec, in the same
//     tenant, through Submit, under the idempotency key
//     "retry:<original>:<attempt>". The original is the task the chain of
//     retries started from and the attempt counts from 1, so retrying a
//     task twice yields its attempt once (the second run finds it:
//     Existing), and retrying a failed retry makes the next attempt. The
//     key is the link from an attempt to its original.
//   - cancel cancels each matching task that has not ended, with its
//     subtree, through Cancel (the completer). A principal that is
//     submitter but not approver in a tenant cancels only the tasks it
//     submitted there, as with the single cancel.
//   - pause and resume put a filter in force as a standing pause and end
//     it (pause.go; the design is in fleet/internal/holds). Their counts
//     are the queued root tasks the filter selects.
//   - set_priority sets the priority of each queued root task the filter
//     selects and moves it to its new level (priority_bulk.go). Running
//     and parked tasks keep their priority (their children inherit it).
//
// The tasks are read a page at a time, newest first; a page is acted on
// before the next is read, and the new attempts (newer than any page
// read) are never matched by the action that made them. A job's
// progress is kept in memory (the last maxBulkJobs) and is lost with
// the dispatcher: running the action again is safe (retry is idempotent,
// cancel skips what has ended).

const (
	bulkPage      = 500 // tasks read per page
	bulkSubmit    = 100 // retries submitted per Submit call
	bulkSample    = 10  // tasks a dry run shows
	maxBulkJobs   = 100 // jobs whose progress is kept
	maxBulkErrors = 10  // error messages a job keeps
)

// bulkScope is who acts and where: the tenants the filter may reach
// (nil: every tenant) and whether a task may be cancelled by the caller.
type bulkScope struct {
	Tenants   []string
	MayCancel func(store.Task) bool
}

// bulkJobs keeps the progress of bulk actions. Each job's fields are
// written by its goroutine under mu and read by snapshot.
type bulkJobs struct {
	mu    sync.Mutex
	jobs  map[uuid.UUID]*bulkJob
	order []uuid.UUID
	wg    sync.WaitGroup
}

type bulkJob struct {
	view    api.BulkJob
	tenants []string      // the scope; nil: every tenant
	changed chan struct{} // closed and replaced at each update
}

func newBulkJobs() *bulkJobs { return &bulkJobs{jobs: map[uuid.UUID]*bulkJob{}} }

// get returns a copy of job id's progress, the tenants of its scope and
// a channel closed at its next update.
func (b *bulkJobs) get(id uuid.UUID) (api.BulkJob, []string, <-chan struct{}, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	j, ok := b.jobs[id]
	if !ok {
		return api.BulkJob{}, nil, nil, false
	}
	v := j.view
	v.Errors = append([]string(nil), v.Errors...)
	return v, j.tenants, j.changed, true
}

func (b *bulkJobs) add(j *bulkJob) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.jobs[j.view.ID] = j
	b.order = append(b.order, j.view.ID)
	for len(b.order) > maxBulkJobs {
		old := b.jobs[b.order[0]]
		if old.view.State == api.BulkRunning {
			break
		}
		delete(b.jobs, b.order[0])
		b.order = b.order[1:]
	}
}

func (b *bulkJobs) update(j *bulkJob, f func(v *api.BulkJob)) {
	b.mu.Lock()
	defer b.mu.Unlock()
	f(&j.view)
	close(j.changed)
	j.changed = make(chan struct{})
}

// BulkPreview counts the tasks action would act on and returns the first
// of them.
func (d *Dispatcher) BulkPreview(ctx context.Context, action string, f api.BulkFilter, sc bulkScope) (api.BulkPreview, error) {
	out := api.BulkPreview{Action: action, Sample: []api.TaskView{}}
	err := d.eachBulkPage(ctx, action, f, sc, func(ts []store.Task) error {
		out.Matched += len(ts)
		for _, t := range ts {
			if len(out.Sample) < bulkSample {
				out.Sample = append(out.Sample, api.NewTaskView(t))
			}
		}
		return nil
	})
	return out, err
}

// StartBulk starts action on the tasks f selects and returns its job at
// once; the action goes on in the background, under ctx's principal but
// not its cancellation, until it is done. Bulk waits for it.
func (d *Dispatcher) StartBulk(ctx context.Context, action, reason string, prio int, f api.BulkFilter, sc bulkScope) api.BulkJob {
	j := &bulkJob{tenants: sc.Tenants, changed: make(chan struct{}), view: api.BulkJob{
		ID: uuid.Must(uuid.NewV7()), Action: action, Filter: f, State: api.BulkRunning,
		Principal: submitter(ctx), StartedAt: time.Now().UTC(),
	}}
	d.bulk.add(j)
	v := j.view
	d.bulk.wg.Go(func() {
		err := d.runBulk(context.WithoutCancel(ctx), j, action, reason, prio, f, sc)
		d.bulk.update(j, func(v *api.BulkJob) {
			v.State, v.EndedAt = api.BulkDone, time.Now().UTC()
			if err != nil {
				v.State, v.Error = api.BulkFailed, err.Error()
			}
		})
		d.log.Info("bulk action ended", "job", v.ID, "action", action, "principal", v.Principal, "err", err)
	})
	return v
}

// BulkJob returns the progress of a bulk job, the tenants of its scope
// (nil: every tenant) and a channel closed at its next update.
func (d *Dispatcher) BulkJob(id uuid.UUID) (api.BulkJob, []string, <-chan struct{}, bool) {
	return d.bulk.get(id)
}

// WaitBulk waits until every bulk job has ended (for tests and
// shutdown).
func (d *Dispatcher) WaitBulk() { d.bulk.wg.Wait() }

func (d *Dispatcher) runBulk(ctx context.Context, j *bulkJob, action, reason string, prio int, f api.BulkFilter, sc bulkScope) error {
	switch action {
	case api.BulkPause:
		return d.bulkPause(ctx, j, reason, f, sc) // pause.go
	case api.BulkResume:
		return d.bulkResume(ctx, j, f, sc)
	case api.BulkSetPriority:
		return d.bulkSetPriority(ctx, j, prio, f, sc) // priority_bulk.go
	}
	return d.eachBulkPage(ctx, action, f, sc, func(ts []store.Task) error {
		d.bulk.update(j, func(v *api.BulkJob) { v.Matched += len(ts) })
		if action == api.BulkRetry {
			for start := 0; start < len(ts); start += bulkSubmit {
				d.retryBatch(ctx, j, ts[start:min(start+bulkSubmit, len(ts))])
			}
			return nil
		}
		for _, t := range ts {
			d.cancelOne(ctx, j, t, reason)
		}
		return nil
	})
}

// eachBulkPage calls fn with each page of the tasks action applies to
// among those f selects within sc.
func (d *Dispatcher) eachBulkPage(ctx context.Context, action string, f api.BulkFilter, sc bulkScope, fn func([]store.Task) error) error {
	p := store.ListTasksParams{States: f.States, Queue: f.Queue, RootID: f.RootID, Labels: f.Labels,
		CreatedAfter: f.CreatedAfter, CreatedBefore: f.CreatedBefore, Tenants: sc.Tenants, Limit: bulkPage}
	if queuedRootsOnly(action) {
		p.States = []store.TaskState{store.TaskQueued}
	}
	for {
		page, err := d.store.ListTasks(ctx, p)
		if err != nil {
			return fmt.Errorf("listing the tasks to %s: %w", action, err)
		}
		var match []store.Task
		for _, t := range page.Tasks {
			if bulkApplies(action, f, sc, t) {
				match = append(match, t)
			}
		}
		if len(match) > 0 {
			if err := fn(match); err != nil {
				return err
			}
		}
		if page.NextCursor == "" {
			return nil
		}
		p.Cursor = page.NextCursor
	}
}

// bulkApplies reports whether action applies to t: retry to an ended
// root, cancel to a task not ended that the caller may cancel.
func bulkApplies(action string, f api.BulkFilter, sc bulkScope, t store.Task) bool {
	if f.Error != "" && !strings.Contains(t.Error, f.Error) {
		return false
	}
	switch {
	case action == api.BulkRetry:
		return t.State.Terminal() && t.ParentID == uuid.Nil
	case queuedRootsOnly(action):
		return t.State == store.TaskQueued && t.ParentID == uuid.Nil
	}
	return !t.State.Terminal() && (sc.MayCancel == nil || sc.MayCancel(t))
}

// queuedRootsOnly reports whether action applies to queued root tasks
// only (pause, resume and set_priority).
func queuedRootsOnly(action string) bool {
	return action == api.BulkPause || action == api.BulkResume || action == api.BulkSetPriority
}

// RetryKey is the idempotency key of the next attempt of t:
// "retry:<original>:<attempt>", where the original and attempt come from
// t's own key when t is itself a retry.
func RetryKey(t store.Task) string {
	orig, attempt := t.ID.String(), 1
	if o, n, ok := ParseRetryKey(t.IdempotencyKey); ok {
		orig, attempt = o.String(), n+1
	}
	return "retry:" + orig + ":" + strconv.Itoa(attempt)
}

// ParseRetryKey reads a key made by RetryKey: the original task and the
// attempt.
func ParseRetryKey(key string) (uuid.UUID, int, bool) {
	rest, ok := strings.CutPrefix(key, "retry:")
	if !ok {
		return uuid.Nil, 0, false
	}
	id, n, ok := strings.Cut(rest, ":")
	if !ok {
		return uuid.Nil, 0, false
	}
	orig, err := uuid.Parse(id)
	attempt, err2 := strconv.Atoi(n)
	if err != nil || err2 != nil || attempt < 1 {
		return uuid.Nil, 0, false
	}
	return orig, attempt, true
}

// retrySpec is t's spec with the key of its next attempt; a retry starts
// now, whatever run_at the original had.
func retrySpec(t store.Task) (fleet.TaskSpec, error) {
	var s fleet.TaskSpec
	if err := json.Unmarshal(t.Spec, &s); err != nil {
		return s, fmt.Errorf("task %s: its stored spec does not decode: %w", t.ID, err)
	}
	s.IdempotencyKey, s.Tenant, s.RunAt = RetryKey(t), t.Tenant, nil
	return s, nil
}

// retryBatch submits the next attempts of ts together, or one by one when
// the batch is refused, so that one bad spec fails alone.
func (d *Dispatcher) retryBatch(ctx context.Context, j *bulkJob, ts []store.Task) {
	specs := make([]fleet.TaskSpec, 0, len(ts))
	for _, t := range ts {
		s, err := retrySpec(t)
		if err != nil {
			d.bulkFailed(j, err)
			continue
		}
		specs = append(specs, s)
	}
	if len(specs) == 0 {
		return
	}
	subs, err := d.Submit(ctx, specs)
	if err != nil && len(specs) > 1 && !errors.As(err, new(*EnqueueError)) {
		for _, s := range specs {
			subs1, err := d.Submit(ctx, []fleet.TaskSpec{s})
			d.bulkSubmitted(j, subs1, err, s.IdempotencyKey)
		}
		return
	}
	d.bulkSubmitted(j, subs, err, "")
}

func (d *Dispatcher) bulkSubmitted(j *bulkJob, subs []Submission, err error, key string) {
	if err != nil && len(subs) == 0 {
		d.bulkFailed(j, fmt.Errorf("retry %s: %w", key, err))
		return
	}
	d.bulk.update(j, func(v *api.BulkJob) {
		for _, s := range subs {
			v.Done++
			if s.Existing {
				v.Existing++
			} else {
				v.Created++
			}
		}
	})
	if err != nil { // stored, not all enqueued: the next run enqueues them
		d.bulk.update(j, func(v *api.BulkJob) { addBulkError(v, err.Error()) })
	}
}

func (d *Dispatcher) cancelOne(ctx context.Context, j *bulkJob, t store.Task, reason string) {
	res, err := d.Cancel(ctx, t.ID, reason)
	switch {
	case errors.Is(err, ErrAlreadyFinished):
		d.bulk.update(j, func(v *api.BulkJob) { v.Done++; v.Skipped++ })
	case err != nil:
		d.bulkFailed(j, fmt.Errorf("cancel %s: %w", t.ID, err))
	default:
		d.bulk.update(j, func(v *api.BulkJob) {
			v.Done++
			v.Cancelled += len(res.Cancelled)
			if len(res.Cancelled) == 0 {
				v.Skipped++
			}
		})
	}
}

func (d *Dispatcher) bulkFailed(j *bulkJob, err error) {
	d.bulk.update(j, func(v *api.BulkJob) { v.Failed++; addBulkError(v, err.Error()) })
}

func addBulkError(v *api.BulkJob, msg string) {
	if len(v.Errors) < maxBulkErrors {
		v.Errors = append(v.Errors, msg)
	}
}
