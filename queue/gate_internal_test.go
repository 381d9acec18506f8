package queue

import (
	"context"
	"testing"
	"time"

	"github.com/agentfleet/agentfleet/queue/natstest"
)

// A pull of a capped key that its context cuts off while it takes a
// token hands the token back: the key is not short of it until AckWait
// (a minute by default). Before, the cut pull returned at once and the
// token the server then delivered was held by nobody: a worker stopping
// in the middle of a pull took a token of the key with it.
func TestACutPullHandsItsTokenBack(t *testing.T) {
	nc := natstest.Start(t).Connect(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := Open(ctx, nc, Config{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := c.NewPuller(ctx, PullerConfig{Queues: []string{"default"}, Keys: map[string]KeyLimit{"team": {MaxRunning: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Send(ctx, ToQueueFor("default", 0, "team"), TaskMessage{Type: MsgStart, TaskID: "t"}, ""); err != nil {
		t.Fatal(err)
	}
	s, err := p.pullKeySource(ctx, "default", 0, "team")
	if err != nil {
		t.Fatal(err)
	}
	for round := range 10 {
		cut, stop := context.WithCancel(ctx)
		stop()
		if got, _, err := p.fetchFrom(cut, s, 1, 0, func(d *Delivery) { t.Fatalf("a cut pull delivered %s", d.Message.TaskID) }); got != 0 || err == nil {
			t.Fatalf("round %d: a cut pull got %d, %v; want none and its context's error", round, got, err)
		}
		tokens, err := p.takeTokens(ctx, s.gate, 1)
		if err != nil {
			t.Fatal(err)
		}
		if len(tokens) != 1 {
			t.Fatalf("round %d: the key's one token is gone after a cut pull", round)
		}
		c.handBack(tokens)
	}
}
