package queue_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentfleet/agentfleet/queue"
)

// NextRaw hands over an event as stored: its bytes decode to what Next
// decodes, Kind comes from the subject, and a message that is not a JSON
// object is an ErrBadEvent that does not end the subscription.
func TestNextRawPassesTheStoredEventOn(t *testing.T) {
	b := setup(t, queue.Config{})
	p := newPublisher(t, b.client)
	if err := p.PublishConfirmed(b.ctx, event("s1", 1, "TURN", `{"text": "a <b> & c"}`)); err != nil {
		t.Fatal(err)
	}
	js, err := jetstream.New(b.nc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.Publish(b.ctx, b.client.Subjects().Event(queue.DefaultTenant, "root", "task-s1", "TURN"), []byte("not json")); err != nil {
		t.Fatal(err)
	}
	if err := p.PublishConfirmed(b.ctx, event("s1", 2, "DONE", `{}`)); err != nil {
		t.Fatal(err)
	}
	decoded := subscribe(t, b.client, queue.EventFilter{}, queue.FromStart())
	raw := subscribe(t, b.client, queue.EventFilter{}, queue.FromStart())
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	for i, want := range []struct {
		kind string
		bad  bool
	}{{"TURN", false}, {"TURN", true}, {"DONE", false}} {
		d, derr := decoded.Next(ctx)
		r, rerr := raw.NextRaw(ctx)
		if want.bad {
			if !errors.Is(rerr, queue.ErrBadEvent) || !errors.Is(derr, queue.ErrBadEvent) {
				t.Fatalf("message %d: NextRaw %v, Next %v; want ErrBadEvent from both", i, rerr, derr)
			}
			continue
		}
		if rerr != nil || derr != nil {
			t.Fatalf("message %d: NextRaw %v, Next %v", i, rerr, derr)
		}
		if r.Kind != want.kind || r.StreamSeq != d.StreamSeq || r.Subject != d.Subject {
			t.Errorf("message %d: NextRaw kind %q seq %d subject %q; Next %q %d %q", i, r.Kind, r.StreamSeq, r.Subject, d.Kind, d.StreamSeq, d.Subject)
		}
		var fromRaw queue.Event
		if err := json.Unmarshal(r.Raw, &fromRaw); err != nil {
			t.Fatalf("message %d: Raw does not decode: %v", i, err)
		}
		if !reflect.DeepEqual(fromRaw, d.Event) {
			t.Errorf("message %d: Raw decodes to %+v, Next gave %+v", i, fromRaw, d.Event)
		}
	}
}
