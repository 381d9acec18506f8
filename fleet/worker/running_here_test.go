package worker_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/agentfleet/agentfleet/fleet/fleettest"
	"github.com/agentfleet/agentfleet/fleet/internal/taskops"
	"github.com/agentfleet/agentfleet/internal/testenv"
	"github.com/agentfleet/agentfleet/queue"
)

// TestDuplicateStartOfARunningTaskIsAcked: a second start message of a
// task its worker is running is acked at its first delivery, and the
// task runs on. (It was naked for stale_after, delivered again until
// max_deliver, and its dead letter failed the live task.)
func TestDuplicateStartOfARunningTaskIsAcked(t *testing.T) {
	t.Parallel()
	f := fleettest.Start(t, fleettest.Options{Workers: 1, SQLite: true})
	id := runningAtGate(t, f, "dup", fleettest.Step{Calls: []fleettest.Call{fleettest.Shell("echo one")}},
		fleettest.Step{Gate: "dup", Text: "done {{results}}"})
	o := taskops.StartMessage(f.Task(id), time.Time{})
	if _, err := f.Queue.Send(waitCtx(t), queue.ToWorker("w0"), o.Msg, "test-duplicate-"+id.String()); err != nil {
		t.Fatal(err)
	}
	var lag queue.Lag
	testenv.EventuallyErr(t, fleettest.Wait, "the duplicate settled", func() (err error) {
		if lag, err = f.Queue.WorkerLag(context.Background(), "w0"); err == nil && (lag.Delivered == 0 || lag.Total() != 0) {
			err = fmt.Errorf("lag %+v", lag)
		}
		return err
	})
	if lag.Delivered != 1 {
		t.Fatalf("the duplicate was delivered %d times, want once (acked)", lag.Delivered)
	}
	f.Model.Open("dup")
	task := f.WaitDone(id)
	if res := succeeded(t, task); task.Attempts != 1 {
		t.Fatalf("the task ran %d times: %+v", task.Attempts, res)
	}
}
