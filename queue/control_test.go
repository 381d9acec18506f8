package queue_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/queue"
)

func TestControlAcrossConnections(t *testing.T) {
	b := setup(t, queue.Config{})
	worker := b.openClient(t, queue.Config{})
	got := make(chan queue.ControlRequest, 4)
	stop, err := worker.ServeControl("team-a", "sess-1", func(_ context.Context, req queue.ControlRequest) queue.ControlReply {
		got <- req
		if req.Op == queue.OpConfigure && req.Model == "no-such-model" {
			return queue.ControlReply{Error: "unknown model no-such-model"}
		}
		return queue.ControlReply{OK: true, Status: &queue.SessionStatus{SessionID: "sess-1", State: "processing", Turns: 3}}
	})
	if err != nil {
		t.Fatal(err)
	}
	reply, err := b.client.Control(b.ctx, "team-a", "sess-1", queue.ControlRequest{Op: queue.OpSteer, Message: "use the other test"})
	if err != nil || !reply.OK || reply.Status == nil || reply.Status.Turns != 3 {
		t.Fatalf("steer = %+v, %v", reply, err)
	}
	if req := <-got; req.Op != queue.OpSteer || req.Message != "use the other test" {
		t.Fatalf("handler got %+v", req)
	}
	reply, err = b.client.Control(b.ctx, "team-a", "sess-1", queue.ControlRequest{Op: queue.OpConfigure, Model: "no-such-model"})
	if !errors.Is(err, queue.ErrControlRefused) || reply.Error != "unknown model no-such-model" {
		t.Fatalf("refused configure = %+v, %v", reply, err)
	}
	<-got
	if _, err := b.client.Control(b.ctx, "team-a", "sess-2", queue.ControlRequest{Op: queue.OpStatus}); !errors.Is(err, queue.ErrNotRunning) {
		t.Fatalf("control of an unserved session = %v, want ErrNotRunning", err)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := b.client.Control(b.ctx, "team-a", "sess-1", queue.ControlRequest{Op: queue.OpAbort}); !errors.Is(err, queue.ErrNotRunning) {
		t.Fatalf("control after stop = %v, want ErrNotRunning", err)
	}
	if err := stop(); err != nil {
		t.Fatalf("second stop: %v", err)
	}
}

func TestControlRejectsInvalidRequests(t *testing.T) {
	b := setup(t, queue.Config{})
	called := make(chan struct{}, 1)
	stop, err := b.client.ServeControl("team-a", "sess-1", func(context.Context, queue.ControlRequest) queue.ControlReply {
		called <- struct{}{}
		return queue.ControlReply{OK: true}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = stop() }()
	for _, req := range []queue.ControlRequest{{Op: "explode"}, {Op: queue.OpSteer}, {Op: queue.OpConfigure}} {
		if _, err := b.client.Control(b.ctx, "team-a", "sess-1", req); err == nil {
			t.Errorf("Control(%+v) accepted", req)
		}
	}
	// A raw request that skips client-side validation is refused by the server side.
	msg, err := b.nc.RequestWithContext(b.ctx, b.client.Subjects().Control("team-a", "sess-1"), []byte(`{"op":"steer"}`))
	if err != nil {
		t.Fatal(err)
	}
	var reply queue.ControlReply
	if err := json.Unmarshal(msg.Data, &reply); err != nil || reply.OK || !strings.Contains(reply.Error, "Message") || len(called) != 0 {
		t.Fatalf("raw invalid request: reply %q, handler called %d", msg.Data, len(called))
	}
	if _, err := b.client.ServeControl("team-a", "a.b", nil); err == nil {
		t.Error("ServeControl accepted a session id with a dot")
	}
	if _, err := b.client.ServeControl("a.*", "sess-1", nil); err == nil || !strings.Contains(err.Error(), "tenant") {
		t.Errorf("ServeControl with a tenant holding a wildcard = %v, want an error naming the tenant", err)
	}
}
