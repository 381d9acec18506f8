package agent_test

import (
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/agent"
)

func TestSlowSubscriberDropsOnlyDeltas(t *testing.T) {
	long := strings.Repeat("word ", 200) // 250 deltas of 4 bytes
	b := setup(t, agent.Config{EventBuffer: 3}, newFakeClient(step{text: long}))
	if _, err := b.s.Submit(ctx30(t), "talk"); err != nil {
		t.Fatal(err)
	}
	// Nobody read while the loop ran: the loop did not stall, and only
	// deltas beyond the buffer were dropped.
	evs := b.waitEvent(t, agent.EventInputDone)
	if b.sub.Dropped() == 0 {
		t.Fatal("no deltas dropped with a 3-event buffer")
	}
	for _, k := range []agent.EventKind{agent.EventSessionStart, agent.EventUserInput, agent.EventAssistantTextStart, agent.EventAssistantTextEnd} {
		if countKind(evs, k) != 1 {
			t.Fatalf("%s missing: %v", k, kinds(evs))
		}
	}
	deltas := countKind(evs, agent.EventAssistantTextDelta)
	if int64(deltas)+b.sub.Dropped() != 250 {
		t.Fatalf("%d delivered + %d dropped != 250", deltas, b.sub.Dropped())
	}
	if end := evs[len(evs)-2]; end.Kind != agent.EventAssistantTextEnd || end.Text != long {
		t.Fatal("END does not carry the full text")
	}
	// Seq stays gapless across all events: the last seq counts every event.
	if last := evs[len(evs)-1].Seq; last != uint64(len(evs))+uint64(b.sub.Dropped()) {
		t.Fatalf("last seq %d, delivered %d, dropped %d", last, len(evs), b.sub.Dropped())
	}
}

func TestSubscriptionCloseStopsDelivery(t *testing.T) {
	b := setup(t, agent.Config{}, newFakeClient(step{text: "x"}))
	b.sub.Close()
	if _, err := b.s.Submit(ctx30(t), "hi"); err != nil {
		t.Fatal(err)
	}
	if _, ok := b.sub.Next(ctx30(t)); ok {
		t.Fatal("closed subscription delivered an event")
	}
}
