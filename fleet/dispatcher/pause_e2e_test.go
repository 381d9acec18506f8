package dispatcher_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/api"
	"github.com/agentfleet/agentfleet/fleet/client"
	"github.com/agentfleet/agentfleet/fleet/dispatcher"
	"github.com/agentfleet/agentfleet/fleet/fleettest"
	"github.com/agentfleet/agentfleet/fleet/internal/holds"
	"github.com/agentfleet/agentfleet/fleet/worker"
	"github.com/agentfleet/agentfleet/internal/testenv"
	"github.com/agentfleet/agentfleet/store"
)

// bulkDone runs a bulk action through the API and waits for its job.
func bulkDone(t *testing.T, c *client.Client, req api.BulkRequest) api.BulkJob {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), fleettest.Wait)
	defer cancel()
	job, err := c.Bulk(ctx, req)
	if err != nil {
		t.Fatalf("bulk %s: %v", req.Action, err)
	}
	if job, err = c.WaitBulk(ctx, job.ID, 20*time.Millisecond, nil); err != nil || job.State != api.BulkDone {
		t.Fatalf("bulk %s: %+v, %v", req.Action, job, err)
	}
	return job
}

// submitLabelled submits n trivial tasks carrying labels.
func submitLabelled(t *testing.T, c *client.Client, n int, labels map[string]string) []uuid.UUID {
	t.Helper()
	specs := make([]fleet.TaskSpec, n)
	for i := range specs {
		specs[i] = fleettest.Spec(fmt.Sprintf("t%d", i), fleettest.Step{Text: "done"})
		specs[i].Labels = labels
	}
	var ids []uuid.UUID
	for start := 0; start < n; start += api.MaxBatch {
		res, err := c.SubmitBatch(context.Background(), specs[start:min(start+api.MaxBatch, n)])
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range res.Tasks {
			ids = append(ids, s.ID)
		}
	}
	return ids
}

// ranOnce checks that every task succeeded after exactly one claim.
func ranOnce(t *testing.T, f *fleettest.Fleet, ids []uuid.UUID) {
	t.Helper()
	for _, id := range ids {
		task := f.Task(id)
		if task.State != store.TaskSucceeded || task.Attempts != 1 {
			t.Fatalf("task %s: %s after %d claims, want succeeded after 1", id, task.State, task.Attempts)
		}
	}
}

// TestPausedLabelClaimsNothingUntilResumed: tasks of a paused label,
// queued before and after the pause, are held by the workers (never
// claimed, no attempt counted) while other work runs; a resume starts
// each exactly once.
func TestPausedLabelClaimsNothingUntilResumed(t *testing.T) {
	f, c := apiFleet(t, fleettest.Options{Workers: 2, Slots: 4, SQLite: true, NoWorkers: true})
	ctx := context.Background()
	held := map[string]string{"batch": "held"}
	before := submitLabelled(t, c, 20, held)
	filter := api.BulkFilter{Labels: held}

	_, err := c.BulkPreview(ctx, api.BulkRequest{Action: api.BulkPause, Filter: api.BulkFilter{Labels: held, States: []store.TaskState{store.TaskFailed}}})
	wantCode(t, "a pause of failed tasks", err, http.StatusBadRequest)
	prev, err := c.BulkPreview(ctx, api.BulkRequest{Action: api.BulkPause, Filter: filter})
	if err != nil || prev.Matched != len(before) || len(prev.Sample) == 0 {
		t.Fatalf("dry run: %+v, %v; want %d queued tasks and a sample", prev, err, len(before))
	}
	job := bulkDone(t, c, api.BulkRequest{Action: api.BulkPause, Filter: filter, Reason: "bad prompt"})
	if job.Paused != len(before) || job.PauseID == "" {
		t.Fatalf("pause job: %+v, want %d paused", job, len(before))
	}
	f.StartWorker()
	f.StartWorker()
	after := submitLabelled(t, c, 10, held)
	free := submitLabelled(t, c, 10, map[string]string{"batch": "free"})
	waitFinished(t, c, map[string]string{"batch": "free"}, int64(len(free)))
	ranOnce(t, f, free)

	// Every held task's message reaches a worker, which holds it.
	all := append(before, after...)
	testenv.EventuallyErr(t, fleettest.Wait, "every paused task held", func() error {
		v, err := c.Pauses(ctx)
		if err != nil {
			return err
		}
		if v.Held != len(all) || len(v.Pauses) != 1 {
			return fmt.Errorf("pauses %+v, want %d held under 1 pause", v, len(all))
		}
		return nil
	})
	for _, id := range all {
		if task := f.Task(id); task.State != store.TaskQueued || task.Attempts != 0 {
			t.Fatalf("paused task %s: %s after %d claims, want queued and never claimed", id, task.State, task.Attempts)
		}
	}

	other, err := c.Bulk(ctx, api.BulkRequest{Action: api.BulkResume, Filter: api.BulkFilter{Labels: map[string]string{"batch": "other"}}})
	if err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, fleettest.Wait)
	defer cancel()
	if other, err = c.WaitBulk(wctx, other.ID, 20*time.Millisecond, nil); err != nil || other.State != api.BulkFailed || !strings.Contains(other.Error, "no pause") {
		t.Fatalf("resuming a filter never paused: %+v, %v; want a failed job naming the missing pause", other, err)
	}
	job = bulkDone(t, c, api.BulkRequest{Action: api.BulkResume, Filter: filter})
	if job.Resumed != len(all) {
		t.Fatalf("resume job: %+v, want %d resumed", job, len(all))
	}
	waitFinished(t, c, held, int64(len(all)))
	ranOnce(t, f, all)
	if v, err := c.Pauses(ctx); err != nil || v.Held != 0 || len(v.Pauses) != 0 {
		t.Fatalf("after the resume: %+v, %v; want no pause and nothing held", v, err)
	}
}

// TestPausedQueueIsNotPulled: a paused queue's tasks stay queued (its
// messages are not even delivered) while another queue's run; only an
// admin of every tenant may pause; a resume runs them once each.
func TestPausedQueueIsNotPulled(t *testing.T) {
	f, c := apiFleet(t, fleettest.Options{Workers: 1, Slots: 4, SQLite: true, Worker: func(_ int, c *worker.Config) {
		c.Queues = []string{"default", "slow"}
	}})
	ctx := context.Background()
	if _, err := c.PauseQueue(ctx, "slow", "maintenance"); err != nil {
		t.Fatal(err)
	}
	wantCode(t, "a bad queue name", func() error { _, err := c.PauseQueue(ctx, "no.dots", ""); return err }(), http.StatusBadRequest)
	specs := make([]fleet.TaskSpec, 6)
	for i := range specs {
		specs[i] = fleettest.Spec("q", fleettest.Step{Text: "done"})
		specs[i].Queue, specs[i].Labels = "slow", map[string]string{"q": "slow"}
	}
	res, err := c.SubmitBatch(ctx, specs)
	if err != nil {
		t.Fatal(err)
	}
	free := submitLabelled(t, c, 4, map[string]string{"q": "default"})
	waitFinished(t, c, map[string]string{"q": "default"}, int64(len(free)))
	var slow []uuid.UUID
	for _, s := range res.Tasks {
		slow = append(slow, s.ID)
		if task := f.Task(s.ID); task.State != store.TaskQueued || task.Attempts != 0 {
			t.Fatalf("a task of the paused queue is %s after %d claims", task.State, task.Attempts)
		}
	}
	if v, err := c.Pauses(ctx); err != nil || v.Held != 0 || len(v.Pauses) != 1 || v.Pauses[0].Queue != "slow" {
		t.Fatalf("pauses %+v, %v: want the queue's, nothing held (its messages stay in the stream)", v, err)
	}
	if err := c.ResumeQueue(ctx, "slow"); err != nil {
		t.Fatal(err)
	}
	wantCode(t, "resuming a queue not paused", c.ResumeQueue(ctx, "slow"), http.StatusNotFound)
	waitFinished(t, c, map[string]string{"q": "slow"}, int64(len(slow)))
	ranOnce(t, f, slow)
}

// TestBulkRetryRunsEachOnce (Postgres, about 2 s of runs): a bulk retry
// of 1,000 failed tasks, run
// twice, makes and runs one new attempt of each: every attempt runs
// once, and nothing else runs.
func TestBulkRetryRunsEachOnce(t *testing.T) {
	const n = 1000
	f, c := apiFleet(t, fleettest.Options{Workers: 2, Slots: 16, NoWorkers: true})
	ctx := context.Background()
	originals := submitLabelled(t, c, n, map[string]string{"run": "nightly"})
	for _, id := range originals {
		if _, err := f.Store.TransitionTask(ctx, store.TransitionTaskParams{ID: id, From: store.TaskQueued, To: store.TaskFailed,
			Error: "dead_letter: provider outage"}); err != nil {
			t.Fatal(err)
		}
	}
	filter := api.BulkFilter{Labels: map[string]string{"run": "nightly"}, States: []store.TaskState{store.TaskFailed}}
	first := bulkDone(t, c, api.BulkRequest{Action: api.BulkRetry, Filter: filter})
	second := bulkDone(t, c, api.BulkRequest{Action: api.BulkRetry, Filter: filter})
	if first.Created != n || second.Created != 0 || second.Existing != n {
		t.Fatalf("runs: %+v then %+v; want %d new, then %d existing", first, second, n, n)
	}
	start := time.Now()
	f.StartWorker()
	f.StartWorker()
	counts := waitFinished(t, c, map[string]string{"run": "nightly"}, 2*n)
	t.Logf("%d retries ran in %s", n, time.Since(start).Round(time.Millisecond))
	if counts[store.TaskSucceeded] != n || counts[store.TaskFailed] != n {
		t.Fatalf("counts %v, want %d succeeded retries and the %d failed originals", counts, n, n)
	}
	page, err := f.Store.ListTasks(ctx, store.ListTasksParams{Labels: map[string]string{"run": "nightly"},
		States: []store.TaskState{store.TaskSucceeded}, Limit: n})
	if err != nil {
		t.Fatal(err)
	}
	var retries []uuid.UUID
	for _, task := range page.Tasks {
		retries = append(retries, task.ID)
	}
	ranOnce(t, f, retries)
	third := bulkDone(t, c, api.BulkRequest{Action: api.BulkRetry, Filter: filter})
	if third.Created != 0 {
		t.Fatalf("a third run made %d new attempts", third.Created)
	}
}

// wantCode checks that err is an API error with the status code.
func wantCode(t *testing.T, what string, err error, code int) {
	t.Helper()
	var ae *client.APIError
	if !errors.As(err, &ae) || ae.Status != code {
		t.Fatalf("%s: %v, want a %d", what, err, code)
	}
}

// TestHeldTasksSurviveADispatcherRestart: a pause ended while no
// dispatcher runs (its dispatcher died between the resume and the
// release) is finished by the next dispatcher to start: the held tasks
// run, each once.
func TestHeldTasksSurviveADispatcherRestart(t *testing.T) {
	f := fleettest.Start(t, fleettest.Options{Workers: 1, Slots: 4, SQLite: true})
	ctx := context.Background()
	start := func() (*client.Client, func()) {
		d, err := dispatcher.New(f.Store, f.Queue, dispatcher.Config{Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		rctx, stop := context.WithCancel(ctx)
		ran := make(chan struct{})
		go func() { defer close(ran); _ = d.Run(rctx) }()
		srv := httptest.NewServer(d.Handler(dispatcher.APIOptions{Token: "t0k"}))
		c, err := client.New(srv.URL, "t0k", nil)
		if err != nil {
			t.Fatal(err)
		}
		return c, func() { srv.CloseClientConnections(); srv.Close(); stop(); <-ran }
	}
	c, stop := start()
	held := map[string]string{"batch": "restart"}
	bulkDone(t, c, api.BulkRequest{Action: api.BulkPause, Filter: api.BulkFilter{Labels: held}})
	ids := submitLabelled(t, c, 8, held)
	testenv.EventuallyErr(t, fleettest.Wait, "every task held", func() error {
		v, err := c.Pauses(ctx)
		if err == nil && v.Held != len(ids) {
			err = fmt.Errorf("%d held", v.Held)
		}
		return err
	})
	stop()

	s, err := holds.Open(ctx, f.Queue) // the resume of a dispatcher that died before releasing
	if err != nil {
		t.Fatal(err)
	}
	for key := range s.Rules() {
		if _, err := s.Unpause(ctx, key); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	for _, id := range ids {
		if task := f.Task(id); task.State != store.TaskQueued || task.Attempts != 0 {
			t.Fatalf("with no dispatcher, held task %s is %s after %d claims", id, task.State, task.Attempts)
		}
	}

	c, stop = start()
	defer stop()
	waitFinished(t, c, held, int64(len(ids)))
	ranOnce(t, f, ids)
}

// TestHeldTasksKeepTheirPlace: tasks a label pause held start, once
// resumed, before the tasks submitted while they were held (their place
// in the queue), in the order they were submitted; also under a key with
// a maximum of running tasks.
func TestHeldTasksKeepTheirPlace(t *testing.T) {
	for _, maxRunning := range []int{0, 2} {
		t.Run(fmt.Sprintf("max_running=%d", maxRunning), func(t *testing.T) { heldTasksKeepTheirPlace(t, maxRunning) })
	}
}

// heldTasksKeepTheirPlace is TestHeldTasksKeepTheirPlace with the default
// tenant's concurrency key at maxRunning (0: none).
func heldTasksKeepTheirPlace(t *testing.T, maxRunning int) {
	keys := func(_ int, c *worker.Config) {
		c.ConcurrencyKeys = map[string]worker.KeyLimit{fleet.DefaultTenant: {MaxRunning: maxRunning}}
	}
	f, c := apiFleet(t, fleettest.Options{Workers: 1, Slots: 1, SQLite: true, NoWorkers: true, Worker: keys})
	ctx := context.Background()
	held := map[string]string{"batch": "held"}
	heldIDs := submitLabelled(t, c, 3, held)
	bulkDone(t, c, api.BulkRequest{Action: api.BulkPause, Filter: api.BulkFilter{Labels: held}})
	// A blocker takes the only slot until the test lets it go, so that
	// what is submitted next stays queued behind it.
	dir := fleettest.SharedDir(t)
	blocker := fleettest.Spec("blocker",
		fleettest.Step{Calls: []fleettest.Call{fleettest.Shell("timeout 60 sh -c 'until [ -e go-on ]; do sleep 0.05; done'")}},
		fleettest.Step{Text: "done"})
	blocker.Environment = fleet.Environment{Kind: fleet.EnvLocal, WorkingDir: dir, Shared: true}
	blockerID := f.Submit(blocker)
	f.StartWorker()
	testenv.EventuallyErr(t, fleettest.Wait, "the held tasks held and the blocker running", func() error {
		v, err := c.Pauses(ctx)
		if err != nil {
			return err
		}
		if v.Held != len(heldIDs) || f.Task(blockerID).State != store.TaskRunning {
			return fmt.Errorf("held %d, blocker %s", v.Held, f.Task(blockerID).State)
		}
		return nil
	})
	later := submitLabelled(t, c, 3, map[string]string{"batch": "later"})
	bulkDone(t, c, api.BulkRequest{Action: api.BulkResume, Filter: api.BulkFilter{Labels: held}})
	testenv.EventuallyErr(t, fleettest.Wait, "the held tasks released", func() error {
		if v, err := c.Pauses(ctx); err != nil || v.Held != 0 {
			return fmt.Errorf("pauses %+v, %v", v, err)
		}
		return nil
	})
	if err := os.WriteFile(filepath.Join(dir, "go-on"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	waitFinished(t, c, map[string]string{"batch": "later"}, int64(len(later)))
	waitFinished(t, c, held, int64(len(heldIDs)))
	ranOnce(t, f, append(heldIDs, later...))
	var lastHeld time.Time
	for i, id := range heldIDs {
		started := f.Task(id).StartedAt
		if i > 0 && started.Before(lastHeld) {
			t.Fatalf("held task %d started before held task %d: released out of order", i, i-1)
		}
		lastHeld = started
	}
	for _, id := range later {
		if started := f.Task(id).StartedAt; !lastHeld.Before(started) {
			t.Fatalf("a task submitted while the held ones were held started at %v, before the last held one (%v)", started, lastHeld)
		}
	}
}
