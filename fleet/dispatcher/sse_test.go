package dispatcher

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/fleet/client"
	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/store"
)

// publishEvents publishes n events of task (in tree root) with seqs
// from+1..from+n and waits for the stream to store them.
func publishEvents(t *testing.T, q *queue.Client, root, task uuid.UUID, from, n int) {
	t.Helper()
	p, err := q.NewEventPublisher()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), testWait)
	defer cancel()
	defer func() { _ = p.Close(ctx) }()
	for i := from + 1; i <= from+n; i++ {
		ev := queue.Event{
			ID: uuid.NewString(), Kind: "ASSISTANT_TEXT_DELTA", SessionID: task.String(), TaskID: task.String(),
			RootTaskID: root.String(), Seq: uint64(i), Data: json.RawMessage(fmt.Sprintf(`{"delta":"part %d"}`, i)),
		}
		if err := p.PublishConfirmed(ctx, ev); err != nil {
			t.Fatal(err)
		}
	}
}

// readEvents reads n events from s.
func readEvents(t *testing.T, s *client.EventStream, n int) []client.StreamedEvent {
	t.Helper()
	var out []client.StreamedEvent
	for len(out) < n {
		ev, err := s.Next()
		if err != nil {
			t.Fatalf("after %d of %d events: %v", len(out), n, err)
		}
		out = append(out, ev)
	}
	return out
}

func openEvents(t *testing.T, b *apiBundle, id uuid.UUID, o client.StreamOptions) *client.EventStream {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testWait)
	t.Cleanup(cancel)
	s, err := b.client.Events(ctx, id, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestSSEReplay(t *testing.T) {
	b := setupAPI(t, sqliteStore)
	ctx := context.Background()
	id := b.submit(t, "talk")
	other, err := b.client.Submit(ctx, validSpec("other"))
	if err != nil {
		t.Fatal(err)
	}
	publishEvents(t, b.q, id, id, 0, 3)
	publishEvents(t, b.q, other.Task.ID, other.Task.ID, 0, 2) // another task's events stay out

	// From the start: every event of the task, in order, with the stream sequence as id.
	all := openEvents(t, b, id, client.StreamOptions{Follow: true})
	first := readEvents(t, all, 3)
	for i, ev := range first {
		if ev.Event.Seq != uint64(i+1) || ev.Event.TaskID != id.String() || ev.Seq == 0 {
			t.Fatalf("event %d: %+v", i, ev)
		}
		if i > 0 && ev.Seq <= first[i-1].Seq {
			t.Fatalf("stream sequences not increasing: %d then %d", first[i-1].Seq, ev.Seq)
		}
	}
	// Live: events published now arrive on the open stream.
	publishEvents(t, b.q, id, id, 3, 2)
	live := readEvents(t, all, 2)
	if live[0].Event.Seq != 4 || live[1].Event.Seq != 5 {
		t.Fatalf("live events %+v", live)
	}

	// Resuming with Last-Event-ID continues after that event.
	resumed := openEvents(t, b, id, client.StreamOptions{AfterSeq: first[1].Seq, Follow: true})
	if got := readEvents(t, resumed, 3); got[0].Event.Seq != 3 || got[2].Event.Seq != 5 {
		t.Fatalf("resume after the second event gave seqs %d..%d, want 3..5", got[0].Event.Seq, got[2].Event.Seq)
	}
	// ?from=<sequence> starts at that event.
	from := openEvents(t, b, id, client.StreamOptions{From: strconv.FormatUint(live[0].Seq, 10), Follow: true})
	if got := readEvents(t, from, 1); got[0].Event.Seq != 4 {
		t.Fatalf("from=%d gave event seq %d, want 4", live[0].Seq, got[0].Event.Seq)
	}
	if code, d, raw := b.rawCall(t, http.MethodGet, "/v1/tasks/"+id.String()+"/events?from=yesterday", nil, testToken); code != http.StatusBadRequest || d.Field != "from" {
		t.Fatalf("bad from: %d %s", code, raw)
	}
	if code, _, raw := b.rawCall(t, http.MethodGet, "/v1/tasks/"+uuid.NewString()+"/events", nil, testToken); code != http.StatusNotFound {
		t.Fatalf("events of an unknown task: %d %s", code, raw)
	}
}

func TestSSEEndsWhenTaskFinishes(t *testing.T) {
	b := setupAPI(t, sqliteStore)
	ctx := context.Background()
	id := b.submit(t, "short")
	runTask(t, b.st, id)
	s := openEvents(t, b, id, client.StreamOptions{})
	publishEvents(t, b.q, id, id, 0, 2)
	readEvents(t, s, 2)
	if _, err := b.st.TransitionTask(ctx, store.TransitionTaskParams{ID: id, From: store.TaskRunning, To: store.TaskSucceeded}); err != nil {
		t.Fatal(err)
	}
	ev, err := s.Next()
	if err != nil || ev.End == nil || ev.End.State != store.TaskSucceeded || ev.End.TaskID != id {
		t.Fatalf("after the task finished: %+v, %v; want the end message", ev, err)
	}
	if _, err := s.Next(); !errors.Is(err, io.EOF) {
		t.Fatalf("after the end: %v, want EOF", err)
	}
}

// TestSSEOfFinishedTaskReplaysEveryStoredEvent: the stream of a task that
// has finished ends only after the events stored by then are written, however
// short the idle wait: it used to start counting when it found the task
// finished, before the replay.
func TestSSEOfFinishedTaskReplaysEveryStoredEvent(t *testing.T) {
	b := setupAPI(t, sqliteStore)
	id := b.submit(t, "long")
	runTask(t, b.st, id)
	const n = 500
	publishEvents(t, b.q, id, id, 0, n)
	if _, err := b.st.TransitionTask(context.Background(), store.TransitionTaskParams{ID: id, From: store.TaskRunning, To: store.TaskSucceeded}); err != nil {
		t.Fatal(err)
	}
	c := b.clientWith(t, APIOptions{Token: testToken, SSEDonePoll: 20 * time.Millisecond, SSEDrainIdle: time.Nanosecond})
	ctx, cancel := context.WithTimeout(context.Background(), testWait)
	defer cancel()
	s, err := c.Events(ctx, id, client.StreamOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	for i := 1; i <= n; i++ {
		ev, err := s.Next()
		if err != nil || ev.End != nil || ev.Event.Seq != uint64(i) {
			t.Fatalf("event %d of %d: %+v, %v", i, n, ev, err)
		}
	}
	if ev, err := s.Next(); err != nil || ev.End == nil || ev.End.State != store.TaskSucceeded {
		t.Fatalf("after the stored events: %+v, %v; want the end message", ev, err)
	}
}

func TestSSETree(t *testing.T) {
	b := setupAPI(t, sqliteStore)
	ctx := context.Background()
	root, err := b.client.Submit(ctx, validSpec("parent"))
	if err != nil {
		t.Fatal(err)
	}
	child := childTask(t, b.st, root.Task.ID)
	publishEvents(t, b.q, root.Task.ID, root.Task.ID, 0, 1)
	publishEvents(t, b.q, root.Task.ID, child.ID, 0, 1)
	s := openEvents(t, b, child.ID, client.StreamOptions{Tree: true})
	got := readEvents(t, s, 2)
	if got[0].Event.TaskID != root.Task.ID.String() || got[1].Event.TaskID != child.ID.String() {
		t.Fatalf("tree events %+v", got)
	}
	only := openEvents(t, b, child.ID, client.StreamOptions{Follow: true})
	if ev := readEvents(t, only, 1)[0]; ev.Event.TaskID != child.ID.String() {
		t.Fatalf("the child's stream began with an event of %s", ev.Event.TaskID)
	}
}
