package dispatcher_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/api"
	"github.com/agentfleet/agentfleet/fleet/client"
	"github.com/agentfleet/agentfleet/fleet/dispatcher"
	"github.com/agentfleet/agentfleet/fleet/fleettest"
	"github.com/agentfleet/agentfleet/fleet/worker"
	"github.com/agentfleet/agentfleet/internal/testenv"
	"github.com/agentfleet/agentfleet/store"
)

// apiFleet is a fleettest fleet with a dispatcher API in front of it.
func apiFleet(t *testing.T, opts fleettest.Options) (*fleettest.Fleet, *client.Client) {
	t.Helper()
	f := fleettest.Start(t, opts)
	d, err := dispatcher.New(f.Store, f.Queue, dispatcher.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() { defer close(ran); _ = d.Run(ctx) }()
	srv := httptest.NewServer(d.Handler(dispatcher.APIOptions{Token: "t0k", SSEDonePoll: 50 * time.Millisecond}))
	t.Cleanup(func() { srv.CloseClientConnections(); srv.Close(); stop(); <-ran })
	c, err := client.New(srv.URL, "t0k", nil)
	if err != nil {
		t.Fatal(err)
	}
	return f, c
}

// waitCounts polls the API until n tasks with the label have finished.
func waitFinished(t *testing.T, c *client.Client, labels map[string]string, n int64) map[store.TaskState]int64 {
	t.Helper()
	var counts map[store.TaskState]int64
	testenv.EventuallyErr(t, fleettest.Wait, fmt.Sprintf("%d tasks to finish", n), func() (err error) {
		if counts, err = c.CountsFiltered(context.Background(), client.ListFilter{Labels: labels}); err != nil {
			return err
		}
		if counts[store.TaskSucceeded]+counts[store.TaskFailed]+counts[store.TaskCancelled] < n {
			return fmt.Errorf("counts %v", counts)
		}
		return nil
	})
	return counts
}

// TestAPIEndToEnd submits a batch through the API to a fleet of workers
// with the simulated model, then reads results, turns and events back
// through the API.
func TestAPIEndToEnd(t *testing.T) {
	_, c := apiFleet(t, fleettest.Options{Workers: 2, Slots: 4, SQLite: true})
	ctx := context.Background()
	labels := map[string]string{"run": "e2e"}
	specs := make([]fleet.TaskSpec, 20)
	for i := range specs {
		specs[i] = fleettest.Spec("task", fleettest.Step{Calls: []fleettest.Call{fleettest.Shell("echo hi")}}, fleettest.Step{Text: "fixed: {{results}}"})
		specs[i].Labels = labels
	}
	res, err := c.SubmitBatch(ctx, specs)
	if err != nil {
		t.Fatal(err)
	}
	counts := waitFinished(t, c, labels, 20)
	if counts[store.TaskSucceeded] != 20 {
		t.Fatalf("counts %v, want 20 succeeded", counts)
	}
	id := res.Tasks[0].ID
	v, err := c.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	r, ok := v.TaskResult()
	if !ok || !r.Success || r.TurnsUsed < 2 {
		t.Fatalf("result %s", v.Result)
	}
	ss, err := c.Sessions(ctx, id)
	if err != nil || len(ss.Sessions) == 0 {
		t.Fatalf("sessions %+v %v", ss, err)
	}
	turns, err := c.Turns(ctx, ss.Sessions[0].ID, 0)
	if err != nil || len(turns.Turns) < 3 {
		t.Fatalf("turns %+v %v", turns, err)
	}
	// The finished task's events replay from the start and the stream ends.
	s, err := c.Events(ctx, id, client.StreamOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	var kinds []string
	var last uint64
	for {
		ev, err := s.Next()
		if err != nil {
			t.Fatalf("events after %v: %v", kinds, err)
		}
		if ev.End != nil {
			if ev.End.State != store.TaskSucceeded {
				t.Fatalf("end %+v", ev.End)
			}
			break
		}
		if ev.Event.Seq != last+1 {
			t.Fatalf("event seq %d after %d: a gap", ev.Event.Seq, last)
		}
		last = ev.Event.Seq
		kinds = append(kinds, ev.Event.Kind)
	}
	if len(kinds) == 0 || kinds[len(kinds)-1] != "SESSION_END" {
		t.Fatalf("event kinds %v, want them to end with SESSION_END", kinds)
	}
}

// TestAPIControlRunningTask steers and then cancels a task that runs on a
// worker, through the API.
func TestAPIControlRunningTask(t *testing.T) {
	// Heartbeats far apart: only the abort can stop the session before the
	// cancel's reply (a heartbeat finding the task cancelled first would stop
	// it and its control subject, and the abort would find no one).
	f, c := apiFleet(t, fleettest.Options{Workers: 1, Slots: 2, SQLite: true, Worker: func(_ int, c *worker.Config) {
		c.HeartbeatInterval, c.StaleAfter = time.Minute, 5*time.Minute
	}})
	ctx := context.Background()
	sub, err := c.Submit(ctx, fleettest.Spec("held", fleettest.Step{Gate: "g1", Calls: []fleettest.Call{fleettest.Shell("echo one")}}, fleettest.Step{Gate: "never", Text: "x"}))
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-f.Model.Arrived("g1"):
	case <-time.After(fleettest.Wait):
		t.Fatal("the task never reached the model")
	}
	if _, err := c.Steer(ctx, sub.Task.ID, "also check the README"); err != nil {
		t.Fatalf("steer a running task: %v", err)
	}
	f.Model.Open("g1")
	select {
	case <-f.Model.Arrived("never"):
	case <-time.After(fleettest.Wait):
		t.Fatal("the task never reached its second turn")
	}
	res, err := c.Cancel(ctx, sub.Task.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Cancelled) != 1 || res.Cancelled[0].From != store.TaskRunning || res.Aborted != 1 {
		t.Fatalf("cancel %+v, want the running task aborted", res)
	}
	done := f.WaitDone(sub.Task.ID)
	if done.State != store.TaskCancelled {
		t.Fatalf("task %s after cancel", done.State)
	}
	_, err = c.Steer(ctx, sub.Task.ID, "too late")
	var ae *client.APIError
	if !errors.As(err, &ae) || ae.Status != 409 || ae.Code != api.CodeNotRunning {
		t.Fatalf("steer of a cancelled task: %v, want 409 not_running", err)
	}
}
