package queue_test

import (
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentfleet/agentfleet/internal/testenv"
	"github.com/agentfleet/agentfleet/queue"
)

// A worker whose every slot was busy longer than WorkerInactiveThreshold
// pulled nothing, and the server removed its own consumer. Its next pull
// makes the consumer again and gets the work pinned to it meanwhile (a
// child in its workspace, a parked parent's resume); a pull on a removed
// consumer finds no responders, which the worker used to retry forever.
func TestAWorkersNextPullMakesItsRemovedConsumerAgain(t *testing.T) {
	b := setup(t, queue.Config{WorkerInactiveThreshold: time.Second})
	p, err := b.client.NewPuller(b.ctx, queue.PullerConfig{WorkerID: "w-busy"})
	if err != nil {
		t.Fatal(err)
	}
	stream := tasksStream(t, b)
	testenv.Eventually(t, waitTimeout, "the server to remove the unpulled worker consumer", func() bool {
		_, err := stream.Consumer(b.ctx, "worker-w-busy")
		return errors.Is(err, jetstream.ErrConsumerNotFound)
	})
	if _, err := b.client.EnqueueToWorker(b.ctx, "w-busy", startMsg("pinned"), ""); err != nil {
		t.Fatal(err)
	}
	d := pull(t, p)
	if err := d.Ack(b.ctx); err != nil {
		t.Fatal(err)
	}
	if d.Message.TaskID != "pinned" {
		t.Fatalf("pulled %+v, want the pinned task", d.Message)
	}
}

// The same for a shared queue: a worker busy with a key's task for longer
// than KeyInactiveThreshold keeps that key's consumer (its heartbeats
// acknowledge there) while the server removes the loop's other, idle
// consumers. Once the task ends, the loop makes them again and takes new
// work; before, every round failed on the first removed one, and a fleet
// whose workers had all been busy that long took no more work from the
// queue.
func TestAServeLoopMakesRemovedKeyConsumersAgain(t *testing.T) {
	const threshold = time.Second
	b := setup(t, queue.Config{AckWait: threshold, KeyInactiveThreshold: threshold})
	p := newKeyedPuller(t, b, nil)
	enqueueKey(t, b, "long", "long", 1)
	var held running
	stop := serveHeld(t, b, p, 1, &held) // fails the test on a pull error
	defer stop()
	testenv.Eventually(t, waitTimeout, "the long task to run", func() bool { return held.byPrefix()["long"] == 1 })
	idle := b.client.Subjects().TasksKey("default", 1, queue.DefaultTenant)
	if keyConsumerOf(t, b, idle) == nil {
		t.Fatalf("no consumer of %s: the loop asks it every round", idle)
	}
	testenv.Eventually(t, waitTimeout, "the server to remove the idle key's consumer", func() bool {
		return keyConsumerOf(t, b, idle) == nil
	})
	if err := held.take()[0].Ack(b.ctx); err != nil {
		t.Fatal(err)
	}
	enqueueKey(t, b, "next", queue.DefaultTenant, 1)
	testenv.Eventually(t, waitTimeout, "the next task to start", func() bool { return held.byPrefix()["next"] == 1 })
	if err := held.take()[0].Ack(b.ctx); err != nil {
		t.Fatal(err)
	}
	if keyConsumerOf(t, b, idle) == nil {
		t.Fatalf("the consumer of %s was not made again", idle)
	}
}
