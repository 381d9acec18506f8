package eventpump_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/worker/internal/eventpump"
	"github.com/agentfleet/agentfleet/internal/testenv"
	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/queue/natstest"
	"github.com/agentfleet/agentfleet/store"
)

func TestMain(m *testing.M) { testenv.VerifyTestMain(m) }

func sink(t *testing.T) eventpump.Sink {
	t.Helper()
	srv := natstest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	q, err := queue.Open(ctx, srv.Connect(t), queue.Config{})
	if err != nil {
		t.Fatal(err)
	}
	pub, err := q.NewEventPublisher()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pub.Close(context.Background()) })
	return eventpump.Sink{Queue: q, Publisher: pub, GiveUp: make(chan struct{})}
}

// An ended task whose SESSION_END never got stored gets it once, after its
// last event, with the task's final state; a task that never ran gets none.
func TestEnsureSessionEndPublishesTheMissingEndOnce(t *testing.T) {
	s := sink(t)
	ctx := context.Background()
	id := uuid.New()
	task := store.Task{ID: id, RootID: id, Attempts: 1, State: store.TaskSucceeded,
		Result: json.RawMessage(`{"success":true,"final_text":"done"}`)}
	if err := s.PublishAfterLast(ctx, task, fleet.KindCheckEnd, json.RawMessage(`{}`)); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := s.EnsureSessionEnd(ctx, task); err != nil {
			t.Fatal(err)
		}
	}
	last, err := s.Queue.LastSeq(ctx, id.String(), id.String())
	if err != nil || last != 2 {
		t.Fatalf("last seq %d, %v; want 2 (the check event, then one SESSION_END)", last, err)
	}
	if has, err := s.Queue.HasEvent(ctx, id.String(), id.String(), fleet.KindSessionEnd); err != nil || !has {
		t.Fatalf("SESSION_END stored: %v, %v", has, err)
	}
	never := uuid.New()
	if err := s.EnsureSessionEnd(ctx, store.Task{ID: never, RootID: never, State: store.TaskCancelled}); err != nil {
		t.Fatal(err)
	}
	if has, _ := s.Queue.HasEvent(ctx, never.String(), never.String(), fleet.KindSessionEnd); has {
		t.Error("a task that never ran got a SESSION_END")
	}
}

// Envelope carries the tree's ids: a child names its parent and root.
func TestEnvelopeNamesTheTree(t *testing.T) {
	root, parent, child := uuid.New(), uuid.New(), uuid.New()
	ev := eventpump.Envelope(store.Task{ID: child, RootID: root, ParentID: parent}, 7, "X", nil)
	if ev.ID != child.String()+"-7" || ev.Seq != 7 || ev.RootTaskID != root.String() || ev.ParentTaskID != parent.String() || ev.SessionID != child.String() {
		t.Errorf("envelope %+v", ev)
	}
	if ev := eventpump.Envelope(store.Task{ID: root, RootID: root}, 1, "X", nil); ev.ParentTaskID != "" {
		t.Errorf("a root task's envelope names parent %q", ev.ParentTaskID)
	}
}
