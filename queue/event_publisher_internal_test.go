package queue

import (
	"context"
	"errors"
	"testing"
	"time"
)

// A publisher whose send goroutine is not running stands for one stuck on a slow NATS.
func stuckPublisher(buffer int) *EventPublisher {
	return &EventPublisher{
		c:        &Client{metrics: &Metrics{}},
		terminal: map[string]bool{"SESSION_END": true},
		queue:    make(chan *pubItem, buffer),
	}
}

func TestFullQueueMakesEveryEventWait(t *testing.T) {
	p := stuckPublisher(1)
	if err := p.put(context.Background(), &pubItem{id: "1"}); err != nil {
		t.Fatal(err)
	}
	for _, it := range []*pubItem{{id: "delta"}, {id: "end", result: make(chan error, 1)}} {
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		err := p.put(ctx, it)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("put of %s on a full queue = %v, want it to wait until ctx ends", it.id, err)
		}
	}
	// Room frees up: the waiting event goes in.
	done := make(chan error, 1)
	go func() { done <- p.put(context.Background(), &pubItem{id: "delta"}) }()
	<-p.queue
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestTermReasonCarriesTaskID(t *testing.T) {
	cases := []struct{ in, task, reason string }{
		{encodeTermReason("t-1", "corrupt: bad"), "t-1", "corrupt: bad"},
		{encodeTermReason("", "no id"), "", "no id"},
		{"Unacknowledged message was deleted", "", "Unacknowledged message was deleted"},
		{termTaskPrefix + "a.b: x", "", termTaskPrefix + "a.b: x"},
	}
	for _, tc := range cases {
		task, reason := decodeTermReason(tc.in)
		if task != tc.task || reason != tc.reason {
			t.Errorf("decodeTermReason(%q) = %q, %q; want %q, %q", tc.in, task, reason, tc.task, tc.reason)
		}
	}
}

func TestShrinkKeepsSmallDataAndCutsAtCharacters(t *testing.T) {
	ev := &Event{SessionID: "s", Seq: 9, Data: []byte(`{"a":1}`)}
	if out, large := shrink(ev, 100, 10); large || string(out) != `{"a":1}` {
		t.Fatalf("small data changed: %s", out)
	}
	ev.Data = []byte(`"` + string(make([]byte, 0)) + "ééééééééééééééééééééééééééééééééééééééééééééééééééééééééééé" + `"`)
	out, large := shrink(ev, 50, 5)
	if !large {
		t.Fatal("large string not shrunk")
	}
	if want := `{"truncated":true,"size":`; string(out[:len(want)]) != want {
		t.Fatalf("shrunk = %s", out)
	}
	if got := cutUTF8("ééé", 5); got != "éé" {
		t.Fatalf("cutUTF8 = %q", got)
	}
}
