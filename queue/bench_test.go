package queue_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/queue/natstest"
)

func benchClient(b *testing.B) (*queue.Client, context.Context) {
	b.Helper()
	srv := natstest.Start(b)
	ctx := context.Background()
	c, err := queue.Open(ctx, srv.Connect(b), queue.Config{})
	if err != nil {
		b.Fatal(err)
	}
	return c, ctx
}

func enqueueN(b *testing.B, c *queue.Client, ctx context.Context, n int) {
	b.Helper()
	for i := range n {
		if _, err := c.Enqueue(ctx, "default", startMsg(fmt.Sprintf("t%d", i)), fmt.Sprintf("m%d", i)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEnqueue: one synchronous, deduplicated publish per task.
func BenchmarkEnqueue(b *testing.B) {
	c, ctx := benchClient(b)
	b.ResetTimer()
	enqueueN(b, c, ctx, b.N)
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
}

// BenchmarkEnqueuePullAck: enqueue, claim (slot + pull of one) and double-ack, with 8
// concurrent producers and 8 concurrent slot holders, as a worker runs them.
func BenchmarkEnqueuePullAck(b *testing.B) {
	c, ctx := benchClient(b)
	p, err := c.NewPuller(ctx, queue.PullerConfig{Queues: []string{"default"}})
	if err != nil {
		b.Fatal(err)
	}
	const workers = 8
	slots, _ := queue.NewSlots(workers)
	b.ResetTimer()
	var wg sync.WaitGroup
	var next sync.Mutex
	claimed := 0
	for w := range workers {
		wg.Go(func() {
			for i := w; i < b.N; i += workers {
				if _, err := c.Enqueue(ctx, "default", startMsg(fmt.Sprintf("t%d", i)), fmt.Sprintf("m%d", i)); err != nil {
					b.Error(err)
					return
				}
			}
		})
		wg.Go(func() {
			for {
				next.Lock()
				if claimed == b.N {
					next.Unlock()
					return
				}
				claimed++
				next.Unlock()
				d, err := p.Claim(ctx, slots)
				if err != nil {
					b.Error(err)
					return
				}
				if err := d.Ack(ctx); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "tasks/s")
}

// benchPublisher starts a server, a Client and an EventPublisher, then resets the timer.
func benchPublisher(b *testing.B) (*queue.Client, *queue.EventPublisher, context.Context) {
	b.Helper()
	c, ctx := benchClient(b)
	p, err := c.NewEventPublisher()
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	return c, p, ctx
}

// BenchmarkEventPublish: asynchronous event publishing, flushed (all acknowledged) at the end.
func BenchmarkEventPublish(b *testing.B) {
	c, p, ctx := benchPublisher(b)
	for i := range b.N {
		if err := p.Publish(ctx, event("s1", uint64(i+1), "ASSISTANT_TEXT_DELTA", `{"delta":"some streamed text of a typical size"}`)); err != nil {
			b.Fatal(err)
		}
	}
	if err := p.Close(ctx); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
	if f := c.Metrics().EventsFailed.Load(); f != 0 {
		b.Fatalf("%d events failed", f)
	}
}

// BenchmarkEventPublishConfirmed: one event at a time, each waiting for its acknowledgement.
func BenchmarkEventPublishConfirmed(b *testing.B) {
	_, p, ctx := benchPublisher(b)
	for i := range b.N {
		if err := p.PublishConfirmed(ctx, event("s1", uint64(i+1), "SESSION_END", `{}`)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
	if err := p.Close(ctx); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkSendBatch: batches of 1000 deduplicated start messages published
// asynchronously and confirmed together, as the dispatcher enqueues a batch.
func BenchmarkSendBatch(b *testing.B) {
	c, ctx := benchClient(b)
	b.ResetTimer()
	for n := range b.N {
		msgs := make([]queue.Outgoing, 1000)
		for i := range msgs {
			id := fmt.Sprintf("t%d-%d", n, i)
			msgs[i] = queue.Outgoing{To: queue.ToQueue("default"), Msg: startMsg(id), MsgID: "start:" + id}
		}
		for _, r := range c.SendBatch(ctx, msgs) {
			if r.Err != nil {
				b.Fatal(r.Err)
			}
		}
	}
	b.ReportMetric(float64(b.N*1000)/b.Elapsed().Seconds(), "msgs/s")
}
