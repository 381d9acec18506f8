package natsauth_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/agentfleet/agentfleet/queue"
)

// With decentralized auth, a worker pool's scoped signing key carries the
// pool's permissions: its user (a creds file) serves its tenant's session,
// which the dispatcher's user reaches, and is refused another tenant's.
func TestDecentralizedAuthWorkerPool(t *testing.T) {
	s := startOperator(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*waitTimeout)
	defer cancel()
	dispNC, _ := s.connect(t, "dispatcher")
	disp, err := queue.Open(ctx, dispNC, queue.Config{})
	if err != nil {
		t.Fatal(err)
	}
	poolNC, violations := s.connect(t, "worker-a")
	pool, err := queue.Open(ctx, poolNC, queue.Config{})
	if err != nil {
		t.Fatalf("Open as pool team-a's worker: %v", err)
	}
	stop, err := pool.ServeControl("team-a", "s-a", func(context.Context, queue.ControlRequest) queue.ControlReply {
		return queue.ControlReply{OK: true}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = stop() }()
	if _, err := disp.Control(ctx, "team-a", "s-a", queue.ControlRequest{Op: queue.OpStatus}); err != nil {
		t.Fatalf("the dispatcher's status of team-a's session on its pool: %v", err)
	}
	sub, err := poolNC.SubscribeSync("agentfleet.control.team-b.*")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sub.NextMsg(waitTimeout); !errors.Is(err, nats.ErrPermissionViolation) {
		t.Fatalf("pool team-a subscribing to team-b's control: %v, want a permission violation", err)
	}
	waitViolation(t, violations, "agentfleet.control.team-b.*")
	short, cancelShort := context.WithTimeout(ctx, time.Second)
	defer cancelShort()
	if _, err := pool.Control(short, "team-b", "s-b", queue.ControlRequest{Op: queue.OpAbort}); err == nil {
		t.Fatal("pool team-a's abort of a team-b session was answered")
	}
	waitViolation(t, violations, "agentfleet.control.team-b.s-b")
}
