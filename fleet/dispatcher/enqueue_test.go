package dispatcher

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/queue/natstest"
	"github.com/agentfleet/agentfleet/store"
)

func keyedSpecs(n int, prefix string) []fleet.TaskSpec {
	specs := make([]fleet.TaskSpec, n)
	for i := range specs {
		specs[i] = validSpec(fmt.Sprintf("task %d", i))
		specs[i].IdempotencyKey = fmt.Sprintf("%s-%d", prefix, i)
	}
	return specs
}

// TestSubmitBatchEnqueuesEachOnce: a batch larger than one publish window
// puts one start message per task on TASKS, and submitting it again (a
// retried request) finds every task and enqueues nothing new.
func TestSubmitBatchEnqueuesEachOnce(t *testing.T) {
	b := setupAPI(t, sqliteStore)
	ctx := context.Background()
	first, err := b.d.Submit(ctx, keyedSpecs(2500, "k"))
	if err != nil {
		t.Fatal(err)
	}
	if got := b.tasksInStream(t); got != 2500 {
		t.Fatalf("TASKS holds %d messages after a batch of 2500", got)
	}
	again, err := b.d.Submit(ctx, keyedSpecs(2500, "k"))
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range again {
		if !s.Existing || s.Task.ID != first[i].Task.ID {
			t.Fatalf("resubmitted task %d: existing=%v id %s, want task %s", i, s.Existing, s.Task.ID, first[i].Task.ID)
		}
	}
	if got := b.tasksInStream(t); got != 2500 {
		t.Fatalf("TASKS holds %d messages after the batch was submitted twice, want 2500", got)
	}
}

// TestSubmitBatchThatCannotBeEnqueued: with NATS gone the tasks are stored,
// stay queued, and the error names every one of them.
func TestSubmitBatchThatCannotBeEnqueued(t *testing.T) {
	nc := natstest.Start(t).Connect(t)
	q, err := queue.Open(context.Background(), nc, queue.Config{})
	if err != nil {
		t.Fatal(err)
	}
	st := sqliteStore(t)
	d, err := New(st, q, Config{}) // not running: only Submit is called
	if err != nil {
		t.Fatal(err)
	}
	nc.Close()
	subs, err := d.Submit(context.Background(), keyedSpecs(3, "gone"))
	var ee *EnqueueError
	if !errors.As(err, &ee) || len(ee.TaskIDs) != 3 {
		t.Fatalf("error %v, want an EnqueueError naming the 3 tasks", err)
	}
	for i, s := range subs {
		got, err := st.GetTask(context.Background(), store.GetTaskParams{ID: s.Task.ID})
		if err != nil || got.State != store.TaskQueued || ee.TaskIDs[i] != s.Task.ID {
			t.Fatalf("task %d: %+v, %v (error names %v)", i, got, err, ee.TaskIDs)
		}
	}
}
