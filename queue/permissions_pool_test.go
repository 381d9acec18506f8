package queue_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/queue/natsauth"
	"github.com/agentfleet/agentfleet/queue/natstest"
)

// startPoolServer is a NATS server with the dispatcher, a worker of every
// tenant ("worker") and a worker pool per entry of pools ("worker-<tenant>",
// serving that tenant only), each with PermissionsFor's permissions.
func startPoolServer(t *testing.T, pools ...string) *permsServer {
	t.Helper()
	opts := natstest.Options(t.TempDir())
	add := func(name string, role queue.Role, tenants ...string) {
		p, err := queue.PermissionsFor(queue.Config{}, role, tenants...)
		if err != nil {
			t.Fatal(err)
		}
		opts.Users = append(opts.Users, &server.User{Username: name, Password: testPassword, Permissions: natsauth.Server(p)})
	}
	add("dispatcher", queue.RoleDispatcher)
	add("worker", queue.RoleWorker)
	for _, tenant := range pools {
		add("worker-"+tenant, queue.RoleWorker, tenant)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*waitTimeout)
	t.Cleanup(cancel)
	return &permsServer{srv: natstest.StartWithOptions(t, opts), ctx: ctx}
}

// A worker pool's user serves its tenant's sessions, which the dispatcher
// reaches, and gets a permission violation serving, reading or steering
// another tenant's: its control requests never reach B's session.
func TestWorkerPoolReadsOnlyItsTenantsControl(t *testing.T) {
	s := startPoolServer(t, "team-a")
	disp, _, _ := s.client(t, "dispatcher", queue.Config{})
	poolA, poolNC, violations := s.client(t, "worker-team-a", queue.Config{})
	every, _, _ := s.client(t, "worker", queue.Config{})

	stop, err := poolA.ServeControl("team-a", "s-a", func(context.Context, queue.ControlRequest) queue.ControlReply {
		return queue.ControlReply{OK: true, Status: &queue.SessionStatus{SessionID: "s-a", State: "running"}}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = stop() }()
	if r, err := disp.Control(s.ctx, "team-a", "s-a", queue.ControlRequest{Op: queue.OpStatus}); err != nil || r.Status.State != "running" {
		t.Fatalf("the dispatcher's status of A's session on A's pool: %+v, %v", r, err)
	}

	// Reading B's control subject: a single session, all of B's, everything.
	for _, subject := range []string{"agentfleet.control.team-b.s-b", "agentfleet.control.team-b.*", "agentfleet.control.>"} {
		sub, err := poolNC.SubscribeSync(subject)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := sub.NextMsg(waitTimeout); !errors.Is(err, nats.ErrPermissionViolation) {
			t.Fatalf("pool A subscribing to %s: %v, want a permission violation", subject, err)
		}
		violation(t, violations, "Subscription", subject)
	}

	// Steering B's session, served by a worker of every tenant.
	var heard = make(chan queue.ControlRequest, 1)
	stopB, err := every.ServeControl("team-b", "s-b", func(_ context.Context, req queue.ControlRequest) queue.ControlReply {
		heard <- req
		return queue.ControlReply{OK: true}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = stopB() }()
	short, cancel := context.WithTimeout(s.ctx, time.Second)
	defer cancel()
	if _, err := poolA.Control(short, "team-b", "s-b", queue.ControlRequest{Op: queue.OpAbort}); err == nil {
		t.Fatal("pool A's abort of B's session was answered")
	}
	violation(t, violations, "Publish", "agentfleet.control.team-b.s-b")
	if _, err := disp.Control(s.ctx, "team-b", "s-b", queue.ControlRequest{Op: queue.OpSteer, Message: "hi"}); err != nil {
		t.Fatalf("the dispatcher's steer of B's session: %v", err)
	}
	if req := <-heard; req.Op != queue.OpSteer {
		t.Fatalf("B's session heard %+v, want only the dispatcher's steer", req)
	}
}

// A worker of every tenant may also serve the control subject sessions had
// before they carried the tenant (<prefix>.control.<session>), so the
// previous release's workers run under the new permissions during a
// rollout; it still cannot read the approvals subject.
func TestWorkerOfEveryTenantServesThePreTenantSubject(t *testing.T) {
	s := startPoolServer(t)
	_, dispNC, _ := s.client(t, "dispatcher", queue.Config{})
	_, nc, violations := s.client(t, "worker", queue.Config{})
	sub, err := nc.Subscribe("agentfleet.control.legacy-session", func(m *nats.Msg) { _ = m.Respond([]byte(`{"ok":true}`)) })
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sub.Unsubscribe() }()
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	msg, err := dispNC.RequestWithContext(s.ctx, "agentfleet.control.legacy-session", []byte(`{"op":"status"}`))
	if err != nil || !strings.Contains(string(msg.Data), `"ok":true`) {
		t.Fatalf("the old subject between the dispatcher and a worker of every tenant: %v, %v", msg, err)
	}
	if _, err := nc.SubscribeSync("agentfleet.control.approvals"); err != nil {
		t.Fatal(err)
	}
	violation(t, violations, "Subscription", "agentfleet.control.approvals")
}

// A tenant named like the approvals subject gets a pool whose control
// subjects lie one level below it: the pool still cannot answer an
// approval.
func TestTenantNamedApprovalsCannotReachTheApprovalsSubject(t *testing.T) {
	s := startPoolServer(t, queue.ApprovalsSession)
	disp, _, _ := s.client(t, "dispatcher", queue.Config{})
	var heard = make(chan struct{}, 2)
	stop, err := disp.ServeApprovals(func(context.Context, queue.ControlRequest) queue.ControlReply {
		heard <- struct{}{}
		return queue.ControlReply{OK: true}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = stop() }()
	pool, _, violations := s.client(t, "worker-"+queue.ApprovalsSession, queue.Config{})
	short, cancel := context.WithTimeout(s.ctx, time.Second)
	defer cancel()
	if _, err := pool.AnswerApproval(short, queue.ControlRequest{Op: queue.OpApprove, TaskID: "t", CallID: "c"}); err == nil {
		t.Fatal("the pool of tenant \"approvals\" answered an approval")
	}
	violation(t, violations, "Publish", "agentfleet.control.approvals")
	if len(heard) != 0 {
		t.Fatal("the approvals handler heard the pool")
	}
}
