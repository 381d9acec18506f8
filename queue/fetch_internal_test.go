package queue

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentfleet/agentfleet/queue/natstest"
)

// A message the server delivers to a short pull request is handed to its
// caller even when it comes at the end of the wait: none is left pending
// on the consumer until AckWait (a minute by default) brings it back. Short
// pulls race a steady publisher while other goroutines keep the CPUs busy,
// as on a loaded worker; every message delivered must reach each.
func TestShortPullsLoseNoMessage(t *testing.T) {
	nc := natstest.Start(t).Connect(t)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "PULLS", Subjects: []string{"pulls.>"}}); err != nil {
		t.Fatal(err)
	}
	cons, err := js.CreateOrUpdateConsumer(ctx, "PULLS", jetstream.ConsumerConfig{Durable: "c",
		AckPolicy: jetstream.AckExplicitPolicy, AckWait: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	var busy atomic.Bool
	busy.Store(true)
	for range runtime.GOMAXPROCS(0) {
		go func() {
			for x := 0; busy.Load(); x++ {
				_ = fmt.Sprint(x) // keeps a CPU busy
			}
		}()
	}
	defer busy.Store(false)

	const total = 2000
	published := make(chan error, 1)
	go func() {
		for i := range total {
			if _, err := js.Publish(ctx, fmt.Sprintf("pulls.%d", i), nil); err != nil {
				published <- err
				return
			}
		}
		published <- nil
	}()
	got := 0
	handle := func(m jetstream.Msg) {
		got++
		if err := m.DoubleAck(ctx); err != nil {
			t.Error(err)
		}
	}
	for done := false; !done || got < total; {
		select {
		case err := <-published:
			if err != nil {
				t.Fatal(err)
			}
			done = true
		default:
		}
		if ctx.Err() != nil {
			break
		}
		if _, err := fetchBatch(ctx, cons, 1, minPullWait+time.Millisecond, handle); emptyPullErr(ctx, err) != nil {
			t.Fatal(err)
		}
		if done && got < total {
			info, err := cons.Info(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if info.NumPending == 0 && info.NumAckPending > 0 {
				t.Fatalf("%d of %d messages came; %d were delivered and never handed over (pending until AckWait)",
					got, total, info.NumAckPending)
			}
		}
	}
	if got != total {
		t.Fatalf("%d of %d messages came: %v", got, total, ctx.Err())
	}
}
