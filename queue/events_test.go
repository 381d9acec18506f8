package queue_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/goleak"

	"github.com/agentfleet/agentfleet/internal/testenv"
	"github.com/agentfleet/agentfleet/queue"
)

func newPublisher(t *testing.T, c *queue.Client) *queue.EventPublisher {
	t.Helper()
	p, err := c.NewEventPublisher()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
		defer cancel()
		if err := p.Close(ctx); err != nil {
			t.Errorf("Close publisher: %v", err)
		}
	})
	return p
}

func subscribe(t *testing.T, c *queue.Client, f queue.EventFilter, from queue.StartPosition) *queue.EventSubscription {
	t.Helper()
	s, err := c.SubscribeEvents(context.Background(), f, from)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s
}

func next(t *testing.T, s *queue.EventSubscription) queue.ReceivedEvent {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	ev, err := s.Next(ctx)
	if err != nil {
		t.Fatalf("Next: %v", err)
	}
	return ev
}

func event(session string, seq uint64, kind string, data string) queue.Event {
	return queue.Event{
		ID:         fmt.Sprintf("%s-%d", session, seq),
		Kind:       kind,
		SessionID:  session,
		TaskID:     "task-" + session,
		RootTaskID: "root",
		Seq:        seq,
		Data:       json.RawMessage(data),
	}
}

func TestIndependentSubscriberSeesEverySessionWithoutGaps(t *testing.T) {
	b := setup(t, queue.Config{})
	const sessions, perSession = 8, 60
	// Workers publish on their own connections; the dashboard subscribes on a third.
	pubs := []*queue.EventPublisher{newPublisher(t, b.client), newPublisher(t, b.openClient(t, queue.Config{}))}
	sub := subscribe(t, b.openClient(t, queue.Config{}), queue.EventFilter{RootTaskID: "root"}, queue.FromStart())
	var wg sync.WaitGroup
	for s := range sessions {
		wg.Go(func() {
			p := pubs[s%len(pubs)]
			id := fmt.Sprintf("s%d", s)
			for seq := uint64(1); seq < perSession; seq++ {
				if err := p.Publish(b.ctx, event(id, seq, "ASSISTANT_TEXT_DELTA", `{"delta":"x"}`)); err != nil {
					t.Errorf("publish %s/%d: %v", id, seq, err)
				}
			}
			if err := p.Publish(b.ctx, event(id, perSession, "SESSION_END", `{}`)); err != nil {
				t.Errorf("publish end of %s: %v", id, err)
			}
		})
	}
	wg.Wait()
	last := map[string]uint64{}
	var lastStreamSeq uint64
	for ended := 0; ended < sessions; {
		ev := next(t, sub)
		if ev.Seq != last[ev.SessionID]+1 {
			t.Fatalf("session %s: seq %d after %d", ev.SessionID, ev.Seq, last[ev.SessionID])
		}
		if ev.StreamSeq <= lastStreamSeq {
			t.Fatalf("stream seq %d after %d", ev.StreamSeq, lastStreamSeq)
		}
		last[ev.SessionID], lastStreamSeq = ev.Seq, ev.StreamSeq
		if ev.Kind == "SESSION_END" {
			ended++
		}
		if want := fmt.Sprintf("agentfleet.events.default.root.%s.%s", ev.TaskID, ev.Kind); ev.Subject != want || ev.V != queue.EventVersion {
			t.Fatalf("subject %s v %d, want %s v 1", ev.Subject, ev.V, want)
		}
	}
	for s := range sessions {
		if got := last[fmt.Sprintf("s%d", s)]; got != perSession {
			t.Fatalf("session s%d ended at seq %d, want %d", s, got, perSession)
		}
	}
	m := b.client.Metrics()
	if m.EventsFailed.Load() != 0 {
		t.Fatalf("%d publishes failed", m.EventsFailed.Load())
	}
}

func TestTerminalEventIsStoredWhenPublishReturns(t *testing.T) {
	b := setup(t, queue.Config{})
	p := newPublisher(t, b.client)
	if err := p.Publish(b.ctx, event("s1", 1, "SESSION_END", `{"ok":true}`)); err != nil {
		t.Fatal(err)
	}
	// The event is in the stream already: a subscriber replaying it sees it, and the counter
	// was incremented before Publish returned.
	if got := b.client.Metrics().EventsPublished.Load(); got != 1 {
		t.Fatalf("EventsPublished = %d right after a confirmed publish, want 1", got)
	}
	ev := next(t, subscribe(t, b.client, queue.EventFilter{TaskID: "task-s1"}, queue.FromStart()))
	if ev.Kind != "SESSION_END" || string(ev.Data) != `{"ok":true}` {
		t.Fatalf("event = %+v", ev)
	}
	if err := p.Close(b.ctx); err != nil {
		t.Fatal(err)
	}
	if err := p.Publish(b.ctx, event("s1", 2, "X", `{}`)); !errors.Is(err, queue.ErrClosed) {
		t.Fatalf("Publish after Close = %v, want ErrClosed", err)
	}
}

func TestLargeToolOutputBecomesPreviewAndReference(t *testing.T) {
	b := setup(t, queue.Config{EventPayloadLimit: 32 << 10, EventPreviewBytes: 100})
	p := newPublisher(t, b.client)
	output := strings.Repeat("é", 100<<10) // 200 KiB of two-byte characters
	data, _ := json.Marshal(map[string]any{"call_id": "call-7", "tool_name": "shell", "is_error": false, "output": output})
	if err := p.PublishConfirmed(b.ctx, event("s1", 1, "TOOL_CALL_END", string(data))); err != nil {
		t.Fatal(err)
	}
	ev := next(t, subscribe(t, b.client, queue.EventFilter{}, queue.FromStart()))
	if len(ev.Data) > 32<<10 {
		t.Fatalf("data is %d bytes, above the limit", len(ev.Data))
	}
	var got struct {
		queue.LargePayload
		CallID   string `json:"call_id"`
		ToolName string `json:"tool_name"`
		Output   string `json:"output"`
	}
	if err := json.Unmarshal(ev.Data, &got); err != nil {
		t.Fatal(err)
	}
	want := queue.PayloadRef{Ref: queue.RefToolOutput, SessionID: "s1", CallID: "call-7"}
	if !got.Truncated || got.Ref != want || got.Size != len(data) || got.CallID != "call-7" || got.ToolName != "shell" || got.Output != "" {
		t.Fatalf("large payload = %+v", got)
	}
	if len(got.Preview) > 100 || !strings.HasPrefix(output, got.Preview) || len(got.Preview) < 98 {
		t.Fatalf("preview of %d bytes is not a clean prefix", len(got.Preview))
	}
	if len(got.Omitted) != 1 || got.Omitted[0] != "output" {
		t.Fatalf("omitted = %v", got.Omitted)
	}
	if b.client.Metrics().EventsLarge.Load() != 1 {
		t.Fatal("EventsLarge not counted")
	}
}

func TestSubscribeFromSeqAndNewOnly(t *testing.T) {
	b := setup(t, queue.Config{})
	p := newPublisher(t, b.client)
	for seq := uint64(1); seq <= 3; seq++ {
		if err := p.PublishConfirmed(b.ctx, event("s1", seq, "TURN", `{}`)); err != nil {
			t.Fatal(err)
		}
	}
	if ev := next(t, subscribe(t, b.client, queue.EventFilter{RootTaskID: "root", TaskID: "task-s1"}, queue.FromSeq(2))); ev.Seq != 2 || ev.StreamSeq != 2 {
		t.Fatalf("FromSeq(2) first = seq %d stream %d", ev.Seq, ev.StreamSeq)
	}
	newOnly := subscribe(t, b.client, queue.EventFilter{}, queue.NewOnly())
	// Other roots are filtered out; the new event on root arrives.
	other := event("s2", 1, "TURN", `{}`)
	other.RootTaskID = "other-root"
	filtered := subscribe(t, b.client, queue.EventFilter{RootTaskID: "root"}, queue.FromSeq(4))
	if err := p.PublishConfirmed(b.ctx, other); err != nil {
		t.Fatal(err)
	}
	if err := p.PublishConfirmed(b.ctx, event("s1", 4, "TURN", `{}`)); err != nil {
		t.Fatal(err)
	}
	if ev := next(t, newOnly); ev.SessionID != "s2" {
		t.Fatalf("NewOnly first = %+v, want s2's event", ev)
	}
	if ev := next(t, filtered); ev.SessionID != "s1" || ev.Seq != 4 {
		t.Fatalf("root filter first = %+v, want s1 seq 4", ev)
	}
}

func TestLastEventAndWhatAPositionReplays(t *testing.T) {
	b := setup(t, queue.Config{})
	if _, ok, err := b.client.LastEvent(b.ctx, "root", "task-s1"); ok || err != nil {
		t.Fatalf("LastEvent of a task without events: ok %v, %v", ok, err)
	}
	p := newPublisher(t, b.client)
	for seq := uint64(1); seq <= 3; seq++ {
		if err := p.PublishConfirmed(b.ctx, event("s1", seq, "TURN", `{}`)); err != nil {
			t.Fatal(err)
		}
		if err := p.PublishConfirmed(b.ctx, event("s2", seq, "TURN", `{}`)); err != nil {
			t.Fatal(err)
		}
	}
	last, ok, err := b.client.LastEvent(b.ctx, "root", "task-s1")
	if err != nil || !ok || last.Seq != 3 || last.StreamSeq != 5 || last.SessionID != "s1" {
		t.Fatalf("LastEvent = %+v, %v, %v; want s1 seq 3 at stream seq 5", last, ok, err)
	}
	for _, tc := range []struct {
		name string
		from queue.StartPosition
		want bool
	}{
		{"start", queue.FromStart(), true},
		{"at it", queue.FromSeq(5), true},
		{"after it", queue.FromSeq(6), false},
		{"new only", queue.NewOnly(), false},
	} {
		if got := tc.from.Replays(last.StreamSeq); got != tc.want {
			t.Errorf("%s: Replays(%d) = %v, want %v", tc.name, last.StreamSeq, got, tc.want)
		}
	}
}

func TestEventValidation(t *testing.T) {
	b := setup(t, queue.Config{})
	p := newPublisher(t, b.client)
	bad := []queue.Event{
		{Kind: "X", SessionID: "s", TaskID: "t"},                               // no id
		{ID: "1", Kind: "A.B", SessionID: "s", TaskID: "t"},                    // kind with a dot
		{ID: "1", Kind: "X", SessionID: "s", TaskID: "*"},                      // wildcard task
		{ID: "1", Kind: "X", SessionID: "s", TaskID: "t", Data: []byte("{no")}, // bad JSON
	}
	for _, ev := range bad {
		if err := p.Publish(b.ctx, ev); err == nil {
			t.Errorf("Publish(%+v) accepted", ev)
		}
	}
	if _, err := b.client.SubscribeEvents(b.ctx, queue.EventFilter{RootTaskID: "a.>"}, queue.FromStart()); err == nil {
		t.Error("SubscribeEvents accepted a wildcard root")
	}
}

// A publish the stream does not acknowledge (here: the stream is gone, as
// while a replicated stream has no leader) is made again until the stream
// stores it; nothing is dropped and nothing is stored twice.
func TestUnacknowledgedEventsArePublishedAgainUntilStored(t *testing.T) {
	b := setup(t, queue.Config{})
	js := deleteEventsStream(t, b)
	p, err := b.client.NewEventPublisher()
	if err != nil {
		t.Fatal(err)
	}
	const total = 50
	for seq := uint64(1); seq <= total; seq++ {
		if err := p.Publish(b.ctx, event("s1", seq, "TOOL_CALL_END", `{}`)); err != nil {
			t.Fatal(err)
		}
	}
	testenv.Eventually(t, waitTimeout, "publishes to fail while the stream is away", func() bool {
		return b.client.Metrics().EventsFailed.Load() > 0
	})
	if _, err := queue.Open(b.ctx, b.nc, queue.Config{}); err != nil { // creates EVENTS again
		t.Fatal(err)
	}
	if err := p.Close(b.ctx); err != nil {
		t.Fatal(err)
	}
	seen := readSeqs(t, b.ctx, js, "EVENTS")
	for seq := uint64(1); seq <= total; seq++ {
		if seen[seq] != 1 {
			t.Errorf("seq %d stored %d times, want once", seq, seen[seq])
		}
	}
	if got := b.client.Metrics().EventsPublished.Load(); got != total {
		t.Errorf("EventsPublished = %d, want %d", got, total)
	}
}

// LastSeq finds the highest Seq even when a republished event was stored
// after the events that followed it; LastEvent returns the last stored.
func TestLastSeqSeesPastARepublishedEvent(t *testing.T) {
	b := setup(t, queue.Config{})
	if seq, err := b.client.LastSeq(b.ctx, "root", "task-s1"); seq != 0 || err != nil {
		t.Fatalf("LastSeq of a task without events = %d, %v", seq, err)
	}
	p := newPublisher(t, b.client)
	late := event("s1", 2, "TURN", `{}`)
	late.ID = "s1-2-republished" // a different message id, so the stream keeps it
	for _, ev := range []queue.Event{event("s1", 1, "TURN", `{}`), event("s1", 3, "TURN", `{}`),
		event("s1", 4, "TURN", `{}`), late} {
		if err := p.PublishConfirmed(b.ctx, ev); err != nil {
			t.Fatal(err)
		}
	}
	last, ok, err := b.client.LastEvent(b.ctx, "root", "task-s1")
	if err != nil || !ok || last.Seq != 2 {
		t.Fatalf("LastEvent = seq %d, %v, %v; want the last stored, seq 2", last.Seq, ok, err)
	}
	if seq, err := b.client.LastSeq(b.ctx, "root", "task-s1"); seq != 4 || err != nil {
		t.Fatalf("LastSeq = %d, %v; want 4", seq, err)
	}
}

// Close that gives up (its ctx ended) on events the stream never
// acknowledges returns an error and leaves no goroutine behind: here a
// plain subscriber takes the events' subject in place of the deleted
// stream, so a publish is received but never acknowledged.
func TestClosedPublisherLeavesNoGoroutine(t *testing.T) {
	b := setup(t, queue.Config{})
	deleteEventsStream(t, b)
	sub, err := b.nc.SubscribeSync("agentfleet.events.>") // answers nothing
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sub.Unsubscribe() }()
	before := goleak.IgnoreCurrent()
	p, err := b.client.NewEventPublisher()
	if err != nil {
		t.Fatal(err)
	}
	for seq := uint64(1); seq <= 3; seq++ {
		if err := p.Publish(b.ctx, event("s1", seq, "TOOL_CALL_END", `{}`)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := sub.NextMsg(waitTimeout); err != nil {
		t.Fatalf("no publish reached the subject: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if err := p.Close(ctx); err == nil {
		t.Fatal("Close reported every event stored, though none was acknowledged")
	}
	// The connection's own goroutines (the JetStream context's reply
	// subscription) live until the connection closes; only ours must end.
	if err := goleak.Find(before, goleak.IgnoreAnyFunction("github.com/nats-io/nats%2ego.(*Conn).waitForMsgs"),
		goleak.IgnoreTopFunction("github.com/nats-io/nats.go/jetstream.(*jetStream).resetPendingAcksOnReconnect")); err != nil {
		t.Fatalf("the closed publisher left goroutines: %v", err)
	}
}

// deleteEventsStream deletes the EVENTS stream under b's client, as when a
// replicated stream has no leader, and returns a JetStream context.
func deleteEventsStream(t *testing.T, b *bundle) jetstream.JetStream {
	t.Helper()
	js, err := jetstream.New(b.nc)
	if err != nil {
		t.Fatal(err)
	}
	if err := js.DeleteStream(b.ctx, "EVENTS"); err != nil {
		t.Fatal(err)
	}
	return js
}
