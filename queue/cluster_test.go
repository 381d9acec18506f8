package queue_test

import (
	"context"
	"testing"

	"github.com/agentfleet/agentfleet/internal/testenv"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/queue/natstest"
)

func TestReplicatedLayoutOnThreeNodeCluster(t *testing.T) {
	testenv.SkipIfShort(t, "starts a three-node cluster")
	cl := natstest.StartCluster(t, 3)
	nc := cl.Connect(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*waitTimeout)
	defer cancel()
	c, err := queue.Open(ctx, nc, queue.Config{Replicas: 3})
	if err != nil {
		t.Fatal(err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"TASKS", "EVENTS", "TASKS_DEADLETTER"} {
		s, err := js.Stream(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		if r := s.CachedInfo().Config.Replicas; r != 3 {
			t.Fatalf("%s replicas = %d, want 3", name, r)
		}
	}
	p, err := c.NewPuller(ctx, queue.PullerConfig{Queues: []string{"default"}, WorkerID: "w-1"})
	if err != nil {
		t.Fatal(err)
	}
	// A replicated consumer answers pull requests once its own leader is elected, shortly
	// after it is created; until then a pull finds no responders (Serve retries those).
	for _, name := range []string{"queue-default", "worker-w-1"} {
		testenv.Eventually(t, waitTimeout, name+" to elect its leader", func() bool {
			cons, err := js.Consumer(ctx, "TASKS", name)
			if err != nil {
				return false
			}
			info, err := cons.Info(ctx)
			return err == nil && info.Cluster != nil && info.Cluster.Leader != ""
		})
	}
	if _, err := c.Enqueue(ctx, "default", startMsg("t1"), "start:t1"); err != nil {
		t.Fatal(err)
	}
	d := pull(t, p)
	if err := d.Ack(ctx); err != nil {
		t.Fatal(err)
	}
	cons, err := js.Consumer(ctx, "TASKS", "worker-w-1")
	if err != nil {
		t.Fatal(err)
	}
	if got := cons.CachedInfo().Config.InactiveThreshold; got != queue.DefaultWorkerInactiveThreshold {
		t.Fatalf("worker consumer InactiveThreshold = %s, want %s", got, queue.DefaultWorkerInactiveThreshold)
	}
}
