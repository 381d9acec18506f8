package taskops_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/fleettest"
	"github.com/agentfleet/agentfleet/fleet/internal/taskops"
	"github.com/agentfleet/agentfleet/internal/testenv"
	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/store"
)

// TestReopenOnceAmongMany: four senders reopen a succeeded task at once;
// exactly one moves it, the task is queued with its input's message on
// its queue (a succeeded task's workspace is gone, so any worker may take
// it), and the message is sent once (one id per input).
func TestReopenOnceAmongMany(t *testing.T) {
	st, q := fleettest.SQLiteStore(t), openQueue(t)
	c, _ := newCompleter(st, q)
	ctx := context.Background()
	task := createTask(t, st, uuid.Nil)
	claim(t, st, task.ID)
	ended, err := c.End(ctx, taskops.Succeeded(task.ID, "w1", fleet.TaskResult{Success: true}))
	if err != nil || ended.Task.State != store.TaskSucceeded {
		t.Fatalf("end: %+v, %v", ended, err)
	}
	name, err := taskops.StoreInput(ctx, st, task.ID, "one more thing")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	moved := make([]bool, 4)
	errs := make([]error, 4)
	for i := range moved {
		wg.Go(func() { moved[i], errs[i] = c.Reopen(ctx, ended.Task, name) })
	}
	wg.Wait()
	won := 0
	for i := range moved {
		if errs[i] != nil {
			t.Fatalf("reopen %d: %v", i, errs[i])
		}
		if moved[i] {
			won++
		}
	}
	if got, _ := st.GetTask(ctx, store.GetTaskParams{ID: task.ID}); won != 1 || got.State != store.TaskQueued {
		t.Fatalf("%d reopens moved it; task %s", won, got.State)
	}
	d := pullOne(t, q)
	if d.Message.Type != queue.MsgInput || d.Message.InputID != name || d.Message.TaskID != task.ID.String() {
		t.Fatalf("message %+v", d.Message)
	}
	// The ack is applied shortly after; a second message would stay.
	testenv.EventuallyErr(t, testWait, "the queue to drain: the input is sent once", func() error {
		lag, err := q.QueueLag(ctx, "default")
		if err == nil && lag.Total() != 0 {
			err = fmt.Errorf("lag %+v", lag)
		}
		return err
	})
}

// TestReopenRefusesCancelled: a cancelled task takes no input.
func TestReopenRefusesCancelled(t *testing.T) {
	st, q := fleettest.SQLiteStore(t), openQueue(t)
	c, _ := newCompleter(st, q)
	ctx := context.Background()
	task := createTask(t, st, uuid.Nil)
	if _, err := c.CancelTree(ctx, task.ID, "cancelled"); err != nil {
		t.Fatal(err)
	}
	got, _ := st.GetTask(ctx, store.GetTaskParams{ID: task.ID})
	if _, err := c.Reopen(ctx, got, "x"); !errors.Is(err, taskops.ErrCancelledTask) {
		t.Fatalf("reopening a cancelled task: %v", err)
	}
}
