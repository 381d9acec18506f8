package worker_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentfleet/agentfleet/internal/testenv"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/fleettest"
	"github.com/agentfleet/agentfleet/fleet/worker"
	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/queue/natstest"
	"github.com/agentfleet/agentfleet/store"
	"github.com/agentfleet/agentfleet/store/sqlite"
)

// clusterFleet is a fleet on a 3-node NATS cluster: the production layout
// (deploy/) in one process. fleettest.Fleet runs on one server, so this
// test wires its own workers from the same parts.
type clusterFleet struct {
	t       *testing.T
	cluster *natstest.Cluster
	queue   *queue.Client // the harness's client, connected to every node
	js      jetstream.JetStream
	store   store.Store
	model   *fleettest.Model
	qcfg    queue.Config
}

func startClusterFleet(t *testing.T) *clusterFleet {
	t.Helper()
	cf := &clusterFleet{t: t, cluster: natstest.StartCluster(t, 3), model: fleettest.NewModel(t)}
	cf.qcfg = queue.Config{
		Replicas: 3,
		// Long enough that sessions heartbeat through a leader election,
		// short enough that a lost delivery comes back within the test.
		AckWait: 5 * time.Second,
		// A node loss may cost a few deliveries; it must never dead-letter.
		MaxDeliver:           20,
		PollInterval:         100 * time.Millisecond,
		DeadLetterRetryDelay: 200 * time.Millisecond,
	}
	nc := cf.cluster.Connect(t, reconnectFast()...)
	ctx := waitCtx(t)
	var err error
	if cf.queue, err = queue.Open(ctx, nc, cf.qcfg); err != nil {
		t.Fatal(err)
	}
	if cf.js, err = jetstream.New(nc); err != nil {
		t.Fatal(err)
	}
	st, err := sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(t.TempDir(), "fleet.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	cf.store = st
	return cf
}

func reconnectFast() []nats.Option {
	return []nats.Option{nats.MaxReconnects(-1), nats.ReconnectWait(100 * time.Millisecond)}
}

// startWorker runs worker i with its connection on node i first, so that
// every node carries a worker; it returns a function that drains the
// worker and waits for it.
func (cf *clusterFleet) startWorker(i, slots int) (stop func()) {
	t := cf.t
	urls := make([]string, 0, len(cf.cluster.Servers))
	for j := range cf.cluster.Servers {
		urls = append(urls, cf.cluster.Servers[(i+j)%len(cf.cluster.Servers)].URL)
	}
	nc, err := nats.Connect(strings.Join(urls, ","), append(reconnectFast(), nats.DontRandomize())...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	q, err := queue.Open(waitCtx(t), nc, cf.qcfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg := worker.Config{
		ID:                fmt.Sprintf("cw%d", i),
		Sessions:          slots,
		WorkspaceRoot:     filepath.Join(t.TempDir(), fmt.Sprintf("ws-%d", i)),
		Providers:         map[string]worker.ProviderConfig{"anthropic": {APIKey: "test-key", BaseURL: cf.model.URL(), DefaultModel: "claude-test"}},
		HeartbeatInterval: 200 * time.Millisecond,
		// No worker dies here: a takeover would only come from a store
		// heartbeat delayed by load, and would run a task twice.
		StaleAfter:      15 * time.Second,
		DrainGrace:      5 * time.Second,
		RetryBackoff:    100 * time.Millisecond,
		MaxRetryBackoff: time.Second,
	}
	cfg.Retry.MaxAttempts = 1
	w, err := worker.New(cfg, worker.Deps{Store: cf.store, Queue: q, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		// A drain, not a halt: a halted worker may leave the SESSION_END of
		// a task it just finished unpublished (its redelivery would publish
		// it), and the test counts them once the workers are gone.
		sctx, scancel := context.WithTimeout(context.Background(), fleettest.Wait)
		defer scancel()
		if err := w.Shutdown(sctx); err != nil {
			t.Errorf("draining worker %s: %v", cfg.ID, err)
		}
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("worker %s: %v", cfg.ID, err)
			}
		case <-time.After(fleettest.Wait):
			t.Errorf("worker %s did not stop within %s", cfg.ID, fleettest.Wait)
		}
	}
	t.Cleanup(stop) // before its connection closes (cleanups run last-in first-out)
	return stop
}

// submit stores a task and enqueues its start, as the dispatcher does.
func (cf *clusterFleet) submit(spec fleet.TaskSpec) uuid.UUID {
	t := cf.t
	spec = spec.WithDefaults()
	if err := spec.ValidateSubmission(); err != nil {
		t.Fatal(err)
	}
	body, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	ctx := waitCtx(t)
	res, err := cf.store.CreateTask(ctx, store.CreateTaskParams{Queue: spec.Queue, Priority: spec.Priority, Spec: body})
	if err != nil {
		t.Fatal(err)
	}
	id := res.Task.ID.String()
	if _, err := cf.queue.Enqueue(ctx, res.Task.Queue, queue.TaskMessage{Type: queue.MsgStart, TaskID: id}, "start:"+id); err != nil {
		t.Fatal(err)
	}
	return res.Task.ID
}

// streamLeader names the node leading a stream's replicas.
func (cf *clusterFleet) streamLeader(ctx context.Context, name string) (leader string, replicas int) {
	cf.t.Helper()
	s, err := cf.js.Stream(ctx, name)
	if err != nil {
		cf.t.Fatal(err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		cf.t.Fatal(err)
	}
	if info.Cluster == nil {
		cf.t.Fatalf("stream %s has no cluster info", name)
	}
	return info.Cluster.Leader, info.Config.Replicas
}

// stopNode shuts down the node named name and returns its index.
func (cf *clusterFleet) stopNode(name string) int {
	for i, s := range cf.cluster.Servers {
		if s.NATS.Name() == name {
			s.Shutdown()
			return i
		}
	}
	cf.t.Fatalf("no cluster node is named %q", name)
	return -1
}

// sessionEnds counts the SESSION_END events of each task stored in EVENTS,
// reading the stream up to its last message.
func (cf *clusterFleet) sessionEnds(ctx context.Context) map[string]int {
	t := cf.t
	s, err := cf.js.Stream(ctx, cf.queue.Config().EventsStream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sub, err := cf.queue.SubscribeEvents(ctx, queue.EventFilter{}, queue.FromStart())
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Stop()
	ends := map[string]int{}
	for seq := uint64(0); seq < info.State.LastSeq; {
		ev, err := sub.Next(ctx)
		if err != nil {
			t.Fatalf("reading EVENTS at seq %d of %d: %v", seq, info.State.LastSeq, err)
		}
		seq = ev.StreamSeq
		if ev.Kind == fleet.KindSessionEnd {
			ends[ev.TaskID]++
		}
	}
	return ends
}

// TestFleetSurvivesLosingANATSNode runs a batch on a 3-node JetStream
// cluster with every stream replicated 3 times, and shuts down the node
// leading the TASKS stream while sessions run and tasks wait: every task
// still succeeds, and each ends exactly once (one SESSION_END, one answer
// to its final model call).
func TestFleetSurvivesLosingANATSNode(t *testing.T) {
	testenv.SkipIfShort(t, "runs a three-node NATS cluster")
	const workers, slots, n = 3, 3, 24
	cf := startClusterFleet(t)
	ctx := waitCtx(t)
	for _, name := range []string{"TASKS", "EVENTS"} {
		if _, r := cf.streamLeader(ctx, name); r != 3 {
			t.Fatalf("stream %s has %d replicas, want 3", name, r)
		}
	}
	stops := make([]func(), workers)
	for i := range stops {
		stops[i] = cf.startWorker(i, slots)
	}

	// Every task runs a shell command, then its final answer waits at the
	// gate: the running sessions are held mid-task while the node goes.
	prompts := make([]string, n)
	ids := make([]uuid.UUID, n)
	for i := range ids {
		spec := fleettest.Spec(fmt.Sprintf("cluster task %d", i),
			fleettest.Step{Calls: []fleettest.Call{fleettest.Shell(fmt.Sprintf("echo cluster-%d", i))}},
			fleettest.Step{Gate: "node-lost", Text: "done {{results}}"})
		prompts[i] = spec.Prompt
		ids[i] = cf.submit(spec)
	}
	if err := cf.model.WaitArrivals(ctx, "node-lost", workers*slots); err != nil {
		t.Fatalf("waiting for %d sessions to reach their last step: %v", workers*slots, err)
	}

	victim, _ := cf.streamLeader(ctx, "TASKS")
	stopped := cf.stopNode(victim)
	t.Logf("stopped node %d (%s), the TASKS leader, with %d sessions running and %d tasks queued",
		stopped, victim, workers*slots, n-workers*slots)
	if err := cf.cluster.WaitForLeader(fleettest.Wait); err != nil {
		t.Fatal(err)
	}
	cf.model.Open("node-lost")

	for i, id := range ids {
		task := waitTaskDone(t, cf.store, id)
		res := succeeded(t, task)
		if want := fmt.Sprintf("cluster-%d", i); !strings.Contains(res.FinalText, want) {
			t.Errorf("task %d: final text %q does not contain %q", i, res.FinalText, want)
		}
	}
	if leader, _ := cf.streamLeader(ctx, "TASKS"); leader == victim || leader == "" {
		t.Errorf("TASKS leader after the loss is %q, want another node than %s", leader, victim)
	}

	// Drain the workers so that nothing more is published, then count.
	for _, stop := range stops {
		stop()
	}
	ends := cf.sessionEnds(ctx)
	for i, id := range ids {
		if got := ends[id.String()]; got != 1 {
			t.Errorf("task %d ended %d times (SESSION_END events), want 1", i, got)
		}
		if got := cf.model.Requests(prompts[i], 1); got != 1 {
			t.Errorf("task %d: final step asked %d times, want 1", i, got)
		}
	}
}

// waitTaskDone polls the store until the task is final.
func waitTaskDone(t *testing.T, st store.Store, id uuid.UUID) store.Task {
	t.Helper()
	var last store.Task
	testenv.EventuallyErr(t, fleettest.Wait, "task "+id.String()+" final", func() (err error) {
		if last, err = st.GetTask(context.Background(), store.GetTaskParams{ID: id}); err == nil && !last.State.Terminal() {
			err = fmt.Errorf("state %s, worker %q, error %q", last.State, last.WorkerID, last.Error)
		}
		return err
	})
	return last
}
