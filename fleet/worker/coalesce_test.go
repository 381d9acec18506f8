package worker_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agentfleet/agentfleet/agent"
	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/fleettest"
	"github.com/agentfleet/agentfleet/fleet/worker"
	"github.com/agentfleet/agentfleet/queue"
)

// TestTextDeltasAreMerged: a long answer streamed in 16-byte deltas reaches
// EVENTS merged into about one event per KB (the window is long here, so
// only the size flushes), with gapless seq; the merged deltas are exactly
// the answer, each a whole number of the model's deltas, and a subscriber
// that joins mid-stream sees whole deltas too. With merging off, every
// model delta is an event.
func TestTextDeltasAreMerged(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	for i := 0; b.Len() < 8192; i++ {
		fmt.Fprintf(&b, "token %08d. ", i) // 16 bytes, one model delta
	}
	answer := b.String()
	for _, tc := range []struct {
		name      string
		window    time.Duration
		maxDeltas int
	}{{"merged", time.Hour, 10}, {"off", -1, len(answer) / 16}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := fleettest.Start(t, fleettest.Options{Workers: 1, Slots: 1, Worker: func(_ int, c *worker.Config) { c.DeltaWindow = tc.window }})
			id := f.Submit(fleettest.Spec("stream", fleettest.Step{Text: answer}))
			succeeded(t, f.WaitDone(id))
			evs := taskEvents(t, f, id.String(), queue.FromStart())
			var deltas []queue.ReceivedEvent
			for i, ev := range evs {
				if ev.Seq != uint64(i+1) {
					t.Fatalf("event %d (%s) has seq %d: seqs must be 1, 2, 3...", i, ev.Kind, ev.Seq)
				}
				if ev.Kind == string(agent.EventAssistantTextDelta) {
					deltas = append(deltas, ev)
				}
			}
			if got := wholeDeltaText(t, deltas); got != answer {
				t.Fatalf("the deltas make %d bytes, want the %d-byte answer", len(got), len(answer))
			}
			if len(deltas) > tc.maxDeltas || (tc.window < 0 && len(deltas) != tc.maxDeltas) {
				t.Fatalf("%d delta events for %d model deltas, want at most %d", len(deltas), len(answer)/16, tc.maxDeltas)
			}
			// A subscriber joining at the third delta sees the rest of the answer in whole deltas.
			late := taskEvents(t, f, id.String(), queue.FromSeq(deltas[2].StreamSeq))
			var rest []queue.ReceivedEvent
			for _, ev := range late {
				if ev.Kind == string(agent.EventAssistantTextDelta) {
					rest = append(rest, ev)
				}
			}
			if got := wholeDeltaText(t, rest); !strings.HasSuffix(answer, got) || len(rest) != len(deltas)-2 {
				t.Fatalf("joining mid-stream: %d deltas making %d bytes, want the last %d deltas of the answer", len(rest), len(got), len(deltas)-2)
			}
		})
	}
}

// taskEvents reads a task's events from EVENTS, up to its SESSION_END.
func taskEvents(t *testing.T, f *fleettest.Fleet, task string, from queue.StartPosition) []queue.ReceivedEvent {
	t.Helper()
	ctx := waitCtx(t)
	sub, err := f.Queue.SubscribeEvents(ctx, queue.EventFilter{TaskID: task}, from)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Stop()
	var out []queue.ReceivedEvent
	for {
		ev, err := sub.Next(ctx)
		if err != nil {
			t.Fatalf("after %d events: %v", len(out), err)
		}
		out = append(out, ev)
		if ev.Kind == fleet.KindSessionEnd {
			return out
		}
	}
}

// wholeDeltaText joins the deltas' text, checking that each is a whole
// number of 16-byte model deltas.
func wholeDeltaText(t *testing.T, deltas []queue.ReceivedEvent) string {
	t.Helper()
	var b strings.Builder
	for i, ev := range deltas {
		var d agent.Event
		if err := json.Unmarshal(ev.Data, &d); err != nil {
			t.Fatalf("delta %d: %v", i, err)
		}
		if len(d.Text)%16 != 0 {
			t.Fatalf("delta %d holds %d bytes, not a whole number of model deltas: %q", i, len(d.Text), d.Text)
		}
		b.WriteString(d.Text)
	}
	return b.String()
}
