package queue_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentfleet/agentfleet/queue"
)

// TestServeApprovalsOneServerPerRequest: two dispatchers serve the
// approvals subject; each request is answered by exactly one of them, and
// requests that are not an approve or deny never reach a handler.
func TestServeApprovalsOneServerPerRequest(t *testing.T) {
	b := setup(t, queue.Config{})
	var calls atomic.Int32
	h := func(_ context.Context, req queue.ControlRequest) queue.ControlReply {
		calls.Add(1)
		if req.CallID == "gone" {
			return queue.ControlReply{Error: "the call is not pending"}
		}
		return queue.ControlReply{OK: true}
	}
	for range 2 {
		stop, err := b.openClient(t, queue.Config{}).ServeApprovals(h)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = stop() })
	}
	for range 10 {
		reply, err := b.client.AnswerApproval(b.ctx, queue.ControlRequest{Op: queue.OpApprove, TaskID: "t1", CallID: "c1"})
		if err != nil || !reply.OK {
			t.Fatalf("approve = %+v, %v", reply, err)
		}
	}
	if n := calls.Load(); n != 10 {
		t.Fatalf("the handlers ran %d times for 10 requests", n)
	}
	_, err := b.client.AnswerApproval(b.ctx, queue.ControlRequest{Op: queue.OpDeny, TaskID: "t1", CallID: "gone"})
	if !errors.Is(err, queue.ErrControlRefused) || !strings.Contains(err.Error(), "not pending") {
		t.Fatalf("deny of a call not pending = %v", err)
	}
	if _, err := b.client.AnswerApproval(b.ctx, queue.ControlRequest{Op: queue.OpApprove, TaskID: "t1"}); err == nil ||
		!strings.Contains(err.Error(), "CallID") {
		t.Fatalf("approve without a call id = %v", err)
	}
	before := calls.Load()
	if _, err := b.client.AnswerApproval(b.ctx, queue.ControlRequest{Op: queue.OpAbort}); err == nil || !strings.Contains(err.Error(), "approve and deny") {
		t.Fatalf("AnswerApproval(abort) = %v, want a refusal naming approve and deny", err)
	}
	// A raw abort that skips the client's check is refused by the server side.
	msg, err := b.nc.RequestWithContext(b.ctx, b.client.Subjects().Approvals(), []byte(`{"op":"abort"}`))
	if err != nil || !strings.Contains(string(msg.Data), "approve and deny") {
		t.Fatalf("raw abort on the approvals subject = %v, %v", msg, err)
	}
	if calls.Load() != before {
		t.Fatal("a handler ran for an abort on the approvals subject")
	}
}
