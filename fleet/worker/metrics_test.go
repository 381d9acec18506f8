package worker_test

import (
	"encoding/json"
	"testing"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/fleettest"
	"github.com/agentfleet/agentfleet/internal/testenv"
	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/llm/sim"
	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/store"
)

// The worker counts every nak it sends and every dead letter its watcher
// handles, on its own /metrics.
func TestNaksAndDeadLettersAreCounted(t *testing.T) {
	t.Parallel()
	f := fleettest.Start(t, fleettest.Options{Workers: 1, Queue: queue.Config{MaxDeliver: 2}})
	spec := fleettest.Spec("always limited", fleettest.Step{Fail: &sim.Failure{Kind: llm.ErrRateLimited, RetryAfter: "0"}, FailTimes: 1000})
	id := f.Submit(spec)
	task := f.WaitDone(id)
	if task.State != store.TaskFailed || task.Error != fleet.ReasonDeadLetter {
		t.Fatalf("task %s (%s), want failed as %s", task.State, task.Error, fleet.ReasonDeadLetter)
	}
	g := f.Workers()[0].Gatherer()
	testenv.Eventually(t, fleettest.Wait, "the dead letter counted", func() bool {
		return metricValue(t, g, "agentfleet_worker_dead_letters_total") == 1
	})
	if n := metricValue(t, g, "agentfleet_worker_naks_total"); n != 2 {
		t.Fatalf("naks_total = %v, want 2 (one per delivery)", n)
	}
}

// A task that ended without its SESSION_END stored (its worker died between
// the final transition and the publish) gets one when a message of it is
// delivered again, after its last event, before that message is acked.
func TestRedeliveryOfAnEndedTaskPublishesItsMissingSessionEnd(t *testing.T) {
	t.Parallel()
	f := fleettest.Start(t, fleettest.Options{Workers: 1, SQLite: true})
	ctx := waitCtx(t)
	res, err := f.Store.CreateTask(ctx, store.CreateTaskParams{Spec: []byte(`{"prompt":"x","profile":"anthropic"}`)})
	if err != nil {
		t.Fatal(err)
	}
	id := res.Task.ID
	if _, err := f.Store.ClaimTask(ctx, store.ClaimTaskParams{ID: id, WorkerID: "dead", From: []store.TaskState{store.TaskQueued}}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Store.TransitionTask(ctx, store.TransitionTaskParams{ID: id, From: store.TaskRunning,
		To: store.TaskSucceeded, WorkerID: "dead", Result: []byte(`{"success":true,"final_text":"ok"}`)}); err != nil {
		t.Fatal(err)
	}
	msg := queue.TaskMessage{Type: queue.MsgStart, TaskID: id.String()}
	if _, err := f.Queue.Enqueue(ctx, "default", msg, "start:"+id.String()); err != nil {
		t.Fatal(err)
	}
	sub, err := f.Queue.SubscribeEvents(ctx, queue.EventFilter{TaskID: id.String()}, queue.FromStart())
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Stop()
	ev, err := sub.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var end fleet.SessionEndData
	if ev.Kind != fleet.KindSessionEnd || ev.Seq != 1 || json.Unmarshal(ev.Data, &end) != nil ||
		end.State != store.TaskSucceeded || end.Result.FinalText != "ok" {
		t.Fatalf("event %s seq %d %s, want the task's SESSION_END at seq 1", ev.Kind, ev.Seq, ev.Data)
	}
	f.WaitQueueDrained("default") // acked
}
