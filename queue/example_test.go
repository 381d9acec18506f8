package queue_test

import (
	"context"
	"fmt"
	"os"

	"github.com/nats-io/nats.go"

	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/queue/embedded"
)

// A dispatcher enqueues a task; a worker with two slots claims it, runs it, and acks.
func Example() {
	dir, _ := os.MkdirTemp("", "queue-example")
	defer func() { _ = os.RemoveAll(dir) }()
	srv, err := embedded.Start(embedded.Config{Port: embedded.RandomPort, DataDir: dir})
	if err != nil {
		panic(err)
	}
	defer func() { _ = srv.Shutdown() }()
	nc, err := nats.Connect(srv.ClientURL())
	if err != nil {
		panic(err)
	}
	defer nc.Close()
	ctx := context.Background()
	client, err := queue.Open(ctx, nc, queue.Config{})
	if err != nil {
		panic(err)
	}

	// Dispatcher: a retried submit is enqueued once.
	for range 2 {
		res, _ := client.Enqueue(ctx, "default", queue.TaskMessage{Type: queue.MsgStart, TaskID: "t-1"}, "submit:key-1")
		fmt.Println("duplicate:", res.Duplicate)
	}

	// Worker: reserve a slot, pull, run, ack.
	slots, _ := queue.NewSlots(2)
	puller, _ := client.NewPuller(ctx, queue.PullerConfig{Queues: []string{"default"}, WorkerID: "w-1"})
	d, _ := puller.Claim(ctx, slots)
	fmt.Println("claimed", d.Message.Type, d.Message.TaskID, "delivery", d.NumDelivered, "slots in use", slots.InUse())
	_ = d.Ack(ctx)
	fmt.Println("slots in use", slots.InUse())
	// Output:
	// duplicate: false
	// duplicate: true
	// claimed start t-1 delivery 1 slots in use 1
	// slots in use 0
}
