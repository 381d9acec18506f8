package queue_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/queue/natsauth"
	"github.com/agentfleet/agentfleet/queue/natstest"
)

// permsServer is a NATS server that accepts only the fleet's users, each
// with the permissions queue.PermissionsFor gives its role.
type permsServer struct {
	srv *natstest.Server
	ctx context.Context
}

// user names in these tests: the role, and observer-<tenant>.
const testPassword = "pw"

func startPermsServer(t *testing.T, cfg queue.Config, observerTenants ...string) *permsServer {
	t.Helper()
	opts := natstest.Options(t.TempDir())
	add := func(name string, role queue.Role, tenants ...string) {
		p, err := queue.PermissionsFor(cfg, role, tenants...)
		if err != nil {
			t.Fatal(err)
		}
		opts.Users = append(opts.Users, &server.User{Username: name, Password: testPassword, Permissions: natsauth.Server(p)})
	}
	add("dispatcher", queue.RoleDispatcher)
	add("worker", queue.RoleWorker)
	for _, tenant := range observerTenants {
		add("observer-"+tenant, queue.RoleObserver, tenant)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*waitTimeout)
	t.Cleanup(cancel)
	return &permsServer{srv: natstest.StartWithOptions(t, opts), ctx: ctx}
}

// conn connects as user and returns the permission violations the server
// reports to it, in order.
func (s *permsServer) conn(t *testing.T, user string) (*nats.Conn, <-chan error) {
	t.Helper()
	violations := make(chan error, 16)
	nc := s.srv.Connect(t, nats.UserInfo(user, testPassword), nats.PermissionErrOnSubscribe(true),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			if errors.Is(err, nats.ErrPermissionViolation) {
				select {
				case violations <- err:
				default:
				}
			}
		}))
	return nc, violations
}

func (s *permsServer) client(t *testing.T, user string, cfg queue.Config) (*queue.Client, *nats.Conn, <-chan error) {
	t.Helper()
	nc, violations := s.conn(t, user)
	c, err := queue.Open(s.ctx, nc, cfg)
	if err != nil {
		t.Fatalf("Open as %s: %v", user, err)
	}
	return c, nc, violations
}

// violation waits for a permission violation naming subject.
func violation(t *testing.T, violations <-chan error, what, subject string) {
	t.Helper()
	select {
	case err := <-violations:
		if !strings.Contains(err.Error(), what) || !strings.Contains(err.Error(), subject) {
			t.Fatalf("violation %q, want one for %s to %s", err, what, subject)
		}
	case <-time.After(waitTimeout):
		t.Fatalf("no permission violation for %s to %s", what, subject)
	}
}

// A worker's user cannot answer an approval: its publish on the approvals
// subject is a permission violation and the dispatcher's handler never
// hears it, while the dispatcher's own request is answered. Nor can it
// serve the approvals subject in the dispatchers' place.
func TestWorkerCannotPublishAnApproval(t *testing.T) {
	s := startPermsServer(t, queue.Config{})
	disp, _, _ := s.client(t, "dispatcher", queue.Config{})
	var heard atomic.Int32
	stop, err := disp.ServeApprovals(func(_ context.Context, req queue.ControlRequest) queue.ControlReply {
		heard.Add(1)
		return queue.ControlReply{OK: true}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = stop() }()
	worker, workerNC, violations := s.client(t, "worker", queue.Config{})
	approve := queue.ControlRequest{Op: queue.OpApprove, TaskID: "t1", CallID: "c1", Reason: "forged"}
	ctx, cancel := context.WithTimeout(s.ctx, time.Second)
	defer cancel()
	if _, err := worker.AnswerApproval(ctx, approve); err == nil {
		t.Fatal("a worker's approval was answered")
	}
	violation(t, violations, "Publish", "agentfleet.control.approvals")
	if _, err := workerNC.QueueSubscribeSync("agentfleet.control.approvals", "dispatchers"); err != nil {
		t.Fatal(err)
	}
	violation(t, violations, "Subscription", "agentfleet.control.approvals")
	if _, err := disp.AnswerApproval(s.ctx, approve); err != nil {
		t.Fatalf("the dispatcher's own approval: %v", err)
	}
	if n := heard.Load(); n != 1 {
		t.Fatalf("the approvals handler heard %d requests, want only the dispatcher's", n)
	}
}

// An observer's user receives its tenant's events and gets a permission
// error subscribing to another tenant's, or to everything.
func TestObserverSubscribesOnlyToItsTenant(t *testing.T) {
	s := startPermsServer(t, queue.Config{}, "team-a")
	worker, _, _ := s.client(t, "worker", queue.Config{})
	obs, violations := s.conn(t, "observer-team-a")
	mine, err := obs.SubscribeSync("agentfleet.events.team-a.>")
	if err != nil {
		t.Fatal(err)
	}
	for _, subject := range []string{"agentfleet.events.team-b.>", "agentfleet.events.>"} {
		other, err := obs.SubscribeSync(subject)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := other.NextMsg(waitTimeout); !errors.Is(err, nats.ErrPermissionViolation) {
			t.Fatalf("subscribing to %s: %v, want a permission violation", subject, err)
		}
		violation(t, violations, "Subscription", subject)
	}
	if err := obs.Flush(); err != nil {
		t.Fatal(err)
	}
	p := newPublisher(t, worker)
	for _, tenant := range []string{"team-b", "team-a"} {
		ev := event("s-"+tenant, 1, "NOTE", `{}`)
		ev.Tenant = tenant
		if err := p.PublishConfirmed(s.ctx, ev); err != nil {
			t.Fatal(err)
		}
	}
	msg, err := mine.NextMsg(waitTimeout)
	if err != nil {
		t.Fatalf("the observer's own tenant: %v", err)
	}
	if !strings.HasPrefix(msg.Subject, "agentfleet.events.team-a.") {
		t.Fatalf("the observer got %s", msg.Subject)
	}
	// Nor may it publish anything, an approval least of all.
	if err := obs.Publish("agentfleet.control.approvals", []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	violation(t, violations, "Publish", "agentfleet.control.approvals")
	// Nor read the stream through JetStream.
	js, _ := jetstream.New(obs)
	ctx, cancel := context.WithTimeout(s.ctx, time.Second)
	defer cancel()
	if _, err := js.Stream(ctx, "EVENTS"); err == nil {
		t.Fatal("an observer read the EVENTS stream's information")
	}
}

// The dispatcher's user cannot take a task: a fetch from a queue's
// consumer is refused, and the task is still there for a worker.
func TestDispatcherCannotClaimATask(t *testing.T) {
	s := startPermsServer(t, queue.Config{})
	disp, dispNC, violations := s.client(t, "dispatcher", queue.Config{})
	worker, _, _ := s.client(t, "worker", queue.Config{})
	puller, err := worker.NewPuller(s.ctx, queue.PullerConfig{Queues: []string{"default"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := disp.Enqueue(s.ctx, "default", startMsg("t-1"), "start:t-1"); err != nil {
		t.Fatal(err)
	}
	js, _ := jetstream.New(dispNC)
	cons, err := js.Consumer(s.ctx, "TASKS", "queue-default") // reading its state is allowed
	if err != nil {
		t.Fatalf("the dispatcher reading a queue's consumer: %v", err)
	}
	batch, err := cons.Fetch(1, jetstream.FetchMaxWait(time.Second))
	if err == nil {
		for m := range batch.Messages() {
			t.Fatalf("the dispatcher fetched task message %s", m.Data())
		}
	}
	violation(t, violations, "Publish", "$JS.API.CONSUMER.MSG.NEXT.TASKS.queue-default")
	short, cancel := context.WithTimeout(s.ctx, time.Second)
	defer cancel()
	if _, err := js.CreateConsumer(short, "TASKS", jetstream.ConsumerConfig{Durable: "sneaky", FilterSubject: "agentfleet.tasks.default"}); err == nil {
		t.Fatal("the dispatcher made a consumer on TASKS")
	}
	d := pull(t, puller)
	if d.Message.TaskID != "t-1" {
		t.Fatalf("the worker pulled %+v", d.Message)
	}
	if err := d.Ack(s.ctx); err != nil {
		t.Fatal(err)
	}
}

// With the shipped permissions, everything the components do still works:
// streams, enqueue and pull with a heartbeat and an ack, events published
// by a worker and replayed by the dispatcher, control of a session, dead
// letters, a capped key's gate and the KV buckets.
func TestRestrictedUsersRunTheQueue(t *testing.T) {
	cfg := queue.Config{AckWait: time.Second, MaxDeliver: 1}
	s := startPermsServer(t, cfg)
	disp, _, dispViolations := s.client(t, "dispatcher", cfg)
	worker, _, workerViolations := s.client(t, "worker", cfg)
	dead := make(chan queue.DeadLetter, 1)
	dlw, err := disp.WatchDeadLetters(s.ctx, func(_ context.Context, dl queue.DeadLetter) error { dead <- dl; return nil })
	if err != nil {
		t.Fatal(err)
	}
	defer dlw.Stop()
	puller, err := worker.NewPuller(s.ctx, queue.PullerConfig{WorkerID: "w1", Queues: []string{"default"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := disp.Enqueue(s.ctx, "default", startMsg("t-ok"), ""); err != nil {
		t.Fatal(err)
	}
	d := pull(t, puller)
	stop, err := worker.ServeControl("team-a", "t-ok", func(context.Context, queue.ControlRequest) queue.ControlReply {
		return queue.ControlReply{OK: true, Status: &queue.SessionStatus{SessionID: "t-ok", State: "running"}}
	})
	if err != nil {
		t.Fatal(err)
	}
	if r, err := disp.Control(s.ctx, "team-a", "t-ok", queue.ControlRequest{Op: queue.OpStatus}); err != nil || r.Status.State != "running" {
		t.Fatalf("status through control: %+v, %v", r, err)
	}
	_ = stop()
	p := newPublisher(t, worker)
	ev := event("t-ok", 1, "SESSION_END", `{}`)
	ev.Tenant = "team-a"
	if err := p.PublishConfirmed(s.ctx, ev); err != nil {
		t.Fatal(err)
	}
	if err := d.Ack(s.ctx); err != nil {
		t.Fatal(err)
	}
	if seq, err := worker.LastSeq(s.ctx, "root", "task-t-ok"); err != nil || seq != 1 {
		t.Fatalf("worker LastSeq = %d, %v", seq, err)
	}
	sub := subscribe(t, disp, queue.EventFilter{Tenants: []string{"team-a"}}, queue.FromStart())
	if got := next(t, sub); got.SessionID != "t-ok" {
		t.Fatalf("the dispatcher replayed %+v", got)
	}
	// A delivery that is terminated reaches the dispatcher's dead-letter watcher.
	if _, err := disp.Enqueue(s.ctx, "default", startMsg("t-bad"), ""); err != nil {
		t.Fatal(err)
	}
	if err := pull(t, puller).Term(s.ctx, "broken"); err != nil {
		t.Fatal(err)
	}
	select {
	case dl := <-dead:
		if dl.TaskID != "t-bad" {
			t.Fatalf("dead letter %+v", dl)
		}
	case <-time.After(waitTimeout):
		t.Fatal("no dead letter")
	}
	// A key with a maximum: its gate's tokens are made, taken and handed back.
	capped, err := worker.NewPuller(s.ctx, queue.PullerConfig{Queues: []string{"default"}, Keys: map[string]queue.KeyLimit{"team": {MaxRunning: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := disp.Send(s.ctx, queue.ToQueueFor("default", 0, "team"), startMsg("t-capped"), ""); err != nil {
		t.Fatal(err)
	}
	if err := pull(t, capped).Ack(s.ctx); err != nil {
		t.Fatal(err)
	}
	for _, c := range []*queue.Client{disp, worker} {
		kv, err := c.KeyValue(s.ctx, "budgets", "test")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := kv.Put(s.ctx, "k", []byte("v")); err != nil {
			t.Fatal(err)
		}
		w, err := kv.WatchAll(s.ctx)
		if err != nil {
			t.Fatal(err)
		}
		if e := <-w.Updates(); e == nil || string(e.Value()) != "v" {
			t.Fatalf("KV watch: %+v", e)
		}
		_ = w.Stop()
	}
	for name, ch := range map[string]<-chan error{"dispatcher": dispViolations, "worker": workerViolations} {
		select {
		case err := <-ch:
			t.Errorf("the %s hit a permission violation: %v", name, err)
		default:
		}
	}
}
