package queue_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/agentfleet/agentfleet/internal/testenv"

	"github.com/nats-io/nats.go"
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
	// Even with its leader elected, the node this client is connected to may
	// not have heard of the consumer yet: a pull finds no responders until it
	// has, and is asked again, as Serve does.
	var d *queue.Delivery
	testenv.EventuallyErr(t, waitTimeout, "a pull the replicated consumers answer", func() (err error) {
		pctx, cancel := context.WithTimeout(ctx, waitTimeout)
		defer cancel()
		if d, err = p.Pull(pctx); err != nil && !errors.Is(err, nats.ErrNoResponders) {
			t.Fatalf("Pull: %v", err)
		}
		return err
	})
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

// Killing the EVENTS stream's leader while a session publishes loses no
// event and stores none twice: publishes the stream did not acknowledge are
// made again (same message id) until a new leader stores them.
func TestNoEventLostWhenTheEventsLeaderDies(t *testing.T) {
	testenv.SkipIfShort(t, "starts a three-node cluster")
	cl := natstest.StartCluster(t, 3)
	nc := cl.Connect(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*waitTimeout)
	defer cancel()
	c, err := queue.Open(ctx, nc, queue.Config{Replicas: 3})
	if err != nil {
		t.Fatal(err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	p, err := c.NewEventPublisher()
	if err != nil {
		t.Fatal(err)
	}
	const total = 600
	for seq := uint64(1); seq <= total; seq++ {
		if seq == total/3 {
			killStreamLeader(t, ctx, cl, js, "EVENTS")
		}
		kind := "TOOL_CALL_END"
		if seq == total {
			kind = "SESSION_END" // confirmed: returns once stored
		}
		if err := p.Publish(ctx, event("s1", seq, kind, `{}`)); err != nil {
			t.Fatalf("publishing seq %d: %v", seq, err)
		}
	}
	if err := p.Close(ctx); err != nil {
		t.Fatal(err)
	}
	seen := readSeqs(t, ctx, js, "EVENTS")
	for seq := uint64(1); seq <= total; seq++ {
		if seen[seq] != 1 {
			t.Errorf("seq %d stored %d times, want once", seq, seen[seq])
		}
	}
	t.Logf("%d publishes failed and were made again", c.Metrics().EventsFailed.Load())
}

// killStreamLeader shuts the node leading stream down.
func killStreamLeader(t *testing.T, ctx context.Context, cl *natstest.Cluster, js jetstream.JetStream, stream string) {
	t.Helper()
	s, err := js.Stream(ctx, stream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(ctx)
	if err != nil || info.Cluster == nil {
		t.Fatalf("stream %s info: %v", stream, err)
	}
	for _, srv := range cl.Servers {
		if srv.NATS.Name() == info.Cluster.Leader {
			srv.Shutdown()
			return
		}
	}
	t.Fatalf("no node is named %q, the leader of %s", info.Cluster.Leader, stream)
}

// readSeqs counts how many times each event seq is stored in stream,
// reading up to the stream's last message: right after a leader change a
// new consumer's first fetches may come back empty, so an empty batch
// does not mean the end.
func readSeqs(t *testing.T, ctx context.Context, js jetstream.JetStream, stream string) map[uint64]int {
	t.Helper()
	var last uint64
	var cons jetstream.Consumer
	testenv.EventuallyErr(t, waitTimeout, "an ordered consumer on "+stream, func() error {
		s, err := js.Stream(ctx, stream)
		if err != nil {
			return err
		}
		info, err := s.Info(ctx)
		if err != nil {
			return err
		}
		last = info.State.LastSeq
		cons, err = js.OrderedConsumer(ctx, stream, jetstream.OrderedConsumerConfig{})
		return err
	})
	seen := map[uint64]int{}
	for read := uint64(0); read < last; {
		if ctx.Err() != nil {
			t.Fatalf("reading %s: %d of %d messages read: %v", stream, read, last, ctx.Err())
		}
		batch, err := cons.Fetch(500, jetstream.FetchMaxWait(time.Second))
		if err != nil {
			t.Fatal(err)
		}
		for m := range batch.Messages() {
			var ev queue.Event
			if err := json.Unmarshal(m.Data(), &ev); err != nil {
				t.Fatal(err)
			}
			seen[ev.Seq]++
			md, err := m.Metadata()
			if err != nil {
				t.Fatal(err)
			}
			read = md.Sequence.Stream
		}
	}
	return seen
}

// Open on a cluster that has not formed yet (here: two of three nodes
// down, so no meta leader) waits for it instead of failing, and creates the
// replicated streams once the nodes are up.
func TestOpenWaitsForAFormingCluster(t *testing.T) {
	testenv.SkipIfShort(t, "starts a three-node cluster and waits out an API timeout")
	cl := natstest.StartCluster(t, 3)
	nc := cl.Servers[0].Connect(t)
	for _, s := range cl.Servers[1:] {
		s.Shutdown()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*waitTimeout)
	defer cancel()
	opened := make(chan error, 1)
	go func() {
		_, err := queue.Open(ctx, nc, queue.Config{Replicas: 3})
		opened <- err
	}()
	// Longer than one JetStream API timeout (5 s), after which Open used to give up.
	select {
	case err := <-opened:
		t.Fatalf("Open returned before the cluster formed: %v", err)
	case <-time.After(6 * time.Second):
	}
	for _, s := range cl.Servers[1:] {
		if err := s.Restart(); err != nil {
			t.Fatal(err)
		}
	}
	if err := <-opened; err != nil {
		t.Fatalf("Open after the cluster formed: %v", err)
	}
}

// A session resumed after its worker died reads the last Seq of its events
// at once through a new ordered consumer. On a cluster the node this client
// is connected to may not know that consumer yet, and the first fetch
// finds no responders; LastSeq asks again, as Serve does, instead of
// failing the delivery.
func TestLastSeqOnAFollowerRetriesNoResponders(t *testing.T) {
	testenv.SkipIfShort(t, "starts a three-node cluster")
	cl := natstest.StartCluster(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 4*waitTimeout)
	defer cancel()
	setup, err := queue.Open(ctx, cl.Connect(t), queue.Config{Replicas: 3})
	if err != nil {
		t.Fatal(err)
	}
	p, err := setup.NewEventPublisher()
	if err != nil {
		t.Fatal(err)
	}
	for seq := uint64(1); seq <= 3; seq++ {
		if err := p.PublishConfirmed(ctx, event("s1", seq, "TOOL_CALL_END", `{}`)); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Close(ctx); err != nil {
		t.Fatal(err)
	}
	// Every node in turn, followers included.
	for _, s := range cl.Servers {
		nc, err := nats.Connect(s.URL)
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		c, err := queue.Open(ctx, nc, queue.Config{Replicas: 3})
		if err != nil {
			t.Fatal(err)
		}
		for range 20 {
			got, err := c.LastSeq(ctx, "root", "task-s1")
			if err != nil || got != 3 {
				t.Fatalf("LastSeq through %s: %d, %v; want 3", s.URL, got, err)
			}
		}
	}
}

// The death of a stream's leader is logged with the stream and the new
// leader, by LogStreamLeaders.
func TestStreamLeaderChangeIsLogged(t *testing.T) {
	testenv.SkipIfShort(t, "starts a three-node cluster")
	cl := natstest.StartCluster(t, 3)
	nc := cl.Connect(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*waitTimeout)
	defer cancel()
	if _, err := queue.Open(ctx, nc, queue.Config{Replicas: 3}); err != nil {
		t.Fatal(err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	// Watch from a node that stays up: a connection to the dying leader
	// would miss the advisory while it reconnects.
	watcher, err := queue.Open(ctx, survivorConn(t, ctx, cl, js, "TASKS"), queue.Config{Replicas: 3})
	if err != nil {
		t.Fatal(err)
	}
	logged := make(chan slog.Record, 16)
	stop, err := watcher.LogStreamLeaders(slog.New(recordHandler(logged)))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = stop() }()
	killStreamLeader(t, ctx, cl, js, "TASKS")
	for {
		select {
		case r := <-logged:
			attrs := map[string]string{}
			r.Attrs(func(a slog.Attr) bool { attrs[a.Key] = a.Value.String(); return true })
			if r.Message == "NATS stream leader elected" && attrs["stream"] == "TASKS" && attrs["leader"] != "" {
				return
			}
		case <-ctx.Done():
			t.Fatal("no leader election of TASKS was logged after its leader died")
		}
	}
}

// survivorConn connects to a node that does not lead stream.
func survivorConn(t *testing.T, ctx context.Context, cl *natstest.Cluster, js jetstream.JetStream, stream string) *nats.Conn {
	t.Helper()
	s, err := js.Stream(ctx, stream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(ctx)
	if err != nil || info.Cluster == nil {
		t.Fatalf("stream %s info: %v", stream, err)
	}
	for _, srv := range cl.Servers {
		if srv.NATS.Name() != info.Cluster.Leader {
			nc, err := nats.Connect(srv.NATS.ClientURL())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(nc.Close)
			return nc
		}
	}
	t.Fatalf("every node leads %s", stream)
	return nil
}

// recordHandler is a slog.Handler sending every record to ch.
type recordHandler chan<- slog.Record

func (h recordHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h recordHandler) Handle(_ context.Context, r slog.Record) error {
	h <- r
	return nil
}
func (h recordHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h recordHandler) WithGroup(string) slog.Handler      { return h }
