package coalesce

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/agentfleet/agentfleet/agent"
)

// chanSource is a Source fed by the test.
type chanSource chan agent.Event

func (c chanSource) Next(ctx context.Context) (agent.Event, bool) {
	select {
	case ev, ok := <-c:
		return ev, ok
	case <-ctx.Done():
		return agent.Event{}, false
	}
}

func deltas(n int) []agent.Event {
	out := make([]agent.Event, n)
	for i := range out {
		out[i] = agent.Event{Kind: agent.EventAssistantTextDelta, Seq: uint64(i + 2), Text: fmt.Sprintf("tök%dé ", i)}
	}
	return out
}

// collect runs Events over evs (all queued before it starts) and returns
// what it yields.
func collect(cfg Config, evs []agent.Event) []agent.Event {
	src := make(chanSource, len(evs))
	for _, ev := range evs {
		src <- ev
	}
	close(src)
	var out []agent.Event
	for ev := range Events(context.Background(), src, cfg) {
		out = append(out, ev)
	}
	return out
}

// wholeDeltas checks that every yielded delta is a run of whole input
// deltas, in order, and that together they are the input text.
func wholeDeltas(t *testing.T, in, out []agent.Event) {
	t.Helper()
	var inText, outText strings.Builder
	var ins []string
	for _, ev := range in {
		if ev.Kind == agent.EventAssistantTextDelta {
			ins = append(ins, ev.Text)
			inText.WriteString(ev.Text)
		}
	}
	next := 0
	for i, ev := range out {
		if ev.Kind != agent.EventAssistantTextDelta {
			continue
		}
		outText.WriteString(ev.Text)
		if !utf8.ValidString(ev.Text) {
			t.Fatalf("yielded delta %d is not valid UTF-8: %q", i, ev.Text)
		}
		rest := ev.Text
		for rest != "" {
			if next >= len(ins) || !strings.HasPrefix(rest, ins[next]) {
				t.Fatalf("yielded delta %d %q does not continue with input delta %d", i, ev.Text, next)
			}
			rest = rest[len(ins[next]):]
			next++
		}
	}
	if outText.String() != inText.String() {
		t.Fatalf("merged text differs:\n got %q\nwant %q", outText.String(), inText.String())
	}
}

// TestMergedTextIsTheStream: a burst of 500 deltas between a START and an
// END comes out as the first delta at once, then 1 KB merges, then the rest
// before the END; the text is exactly the stream's and every merge is made
// of whole deltas.
func TestMergedTextIsTheStream(t *testing.T) {
	in := append([]agent.Event{{Kind: agent.EventAssistantTextStart, Seq: 1}}, deltas(500)...)
	in = append(in, agent.Event{Kind: agent.EventAssistantTextEnd, Seq: 502})
	out := collect(Config{Window: time.Hour}, in)
	wholeDeltas(t, in, out)
	if out[0].Kind != agent.EventAssistantTextStart || out[len(out)-1].Kind != agent.EventAssistantTextEnd {
		t.Fatalf("first %s, last %s: START and END must stay around the deltas", out[0].Kind, out[len(out)-1].Kind)
	}
	if out[1].Text != in[1].Text {
		t.Fatalf("the first delta was merged (%q); it must go out alone at once", out[1].Text)
	}
	total := 0
	for _, ev := range out[2 : len(out)-1] {
		total += len(ev.Text)
	}
	want := 2 + 1 + (total+DefaultMaxBytes-1)/DefaultMaxBytes // START, END, the first delta, ~1 KB merges
	if len(out) > want+1 || len(out) < 4 {
		t.Fatalf("%d events out of %d, want about %d", len(out), len(in), want)
	}
	for i, ev := range out[2 : len(out)-2] {
		if len(ev.Text) < DefaultMaxBytes || len(ev.Text) > DefaultMaxBytes+20 {
			t.Fatalf("merge %d holds %d bytes, want a little over %d", i, len(ev.Text), DefaultMaxBytes)
		}
	}
	if out[2].Seq != in[2].Seq {
		t.Fatalf("a merge has seq %d, want its first delta's %d", out[2].Seq, in[2].Seq)
	}
}

// TestOtherEventsFlushAndKeepOrder: tool events between text runs flush
// the merged text first, and a new answer's first delta goes out alone.
func TestOtherEventsFlushAndKeepOrder(t *testing.T) {
	d := deltas(6)
	in := []agent.Event{d[0], d[1], d[2], {Kind: agent.EventToolCallStart, CallID: "c1"}, {Kind: agent.EventToolCallEnd, CallID: "c1"}, d[3], d[4], d[5]}
	out := collect(Config{Window: time.Hour}, in)
	wholeDeltas(t, in, out)
	var kinds []string
	for _, ev := range out {
		kinds = append(kinds, fmt.Sprintf("%s:%q", ev.Kind, ev.Text))
	}
	want := []string{
		fmt.Sprintf("%s:%q", agent.EventAssistantTextDelta, d[0].Text),
		fmt.Sprintf("%s:%q", agent.EventAssistantTextDelta, d[1].Text+d[2].Text),
		fmt.Sprintf("%s:%q", agent.EventToolCallStart, ""),
		fmt.Sprintf("%s:%q", agent.EventToolCallEnd, ""),
		fmt.Sprintf("%s:%q", agent.EventAssistantTextDelta, d[3].Text),
		fmt.Sprintf("%s:%q", agent.EventAssistantTextDelta, d[4].Text+d[5].Text),
	}
	if fmt.Sprint(kinds) != fmt.Sprint(want) {
		t.Fatalf("events\n got %v\nwant %v", kinds, want)
	}
}

// TestWindowFlushesWithoutMoreEvents: merged text waits at most the
// window, even when the stream then goes quiet.
func TestWindowFlushesWithoutMoreEvents(t *testing.T) {
	src := make(chanSource)
	out := make(chan agent.Event)
	go func() {
		defer close(out)
		for ev := range Events(context.Background(), src, Config{Window: 20 * time.Millisecond}) {
			out <- ev
		}
	}()
	d := deltas(3)
	recv := func(want string) {
		t.Helper()
		select {
		case ev := <-out:
			if ev.Text != want {
				t.Fatalf("got %q, want %q", ev.Text, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("nothing yielded, want %q", want)
		}
	}
	src <- d[0]
	recv(d[0].Text) // at once
	src <- d[1]
	src <- d[2]
	recv(d[1].Text + d[2].Text) // when the window closes, with no event after
	close(src)
	if _, ok := <-out; ok {
		t.Fatal("an event after the source ended")
	}
}

// TestNegativeWindowPassesEverything: merging off yields every delta.
func TestNegativeWindowPassesEverything(t *testing.T) {
	in := deltas(50)
	out := collect(Config{Window: -1}, in)
	if len(out) != len(in) {
		t.Fatalf("%d events out of %d with merging off", len(out), len(in))
	}
	wholeDeltas(t, in, out)
}
