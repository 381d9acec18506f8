package queue

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/nats-io/nats.go"
)

// Approval operations, sent to ApprovalsSession rather than to a session:
// a session waiting for an approval is parked and nobody serves its own
// control subject.
const (
	// OpApprove approves the pending call CallID of task TaskID.
	OpApprove ControlOp = "approve"
	// OpDeny denies it, telling the model Reason.
	OpDeny ControlOp = "deny"
)

// ApprovalsSession is the name under the control prefix where approvals
// are answered: <prefix>.control.approvals (no session id is a word).
const ApprovalsSession = "approvals"

// approvalsGroup is the queue group of the approvals subject: one
// dispatcher answers each request.
const approvalsGroup = "dispatchers"

// ServeApprovals answers approve and deny requests on
// <prefix>.control.approvals with h until stop is called, one server of
// the queue group per request. Requesters use Control(ctx,
// ApprovalsSession, req). Other ops and invalid requests are answered with
// ok=false without calling h.
func (c *Client) ServeApprovals(h ControlHandler) (stop func() error, err error) {
	sub, err := c.nc.QueueSubscribe(c.subj.Control(ApprovalsSession), approvalsGroup, func(m *nats.Msg) {
		reply := c.answer(m.Data, func(ctx context.Context, req ControlRequest) ControlReply {
			if req.Op != OpApprove && req.Op != OpDeny {
				return ControlReply{Error: fmt.Sprintf("the approvals subject takes approve and deny, not %s", req.Op)}
			}
			return h(ctx, req)
		})
		body, _ := json.Marshal(reply)
		_ = m.Respond(body)
	})
	if err != nil {
		return nil, fmt.Errorf("queue: serve approvals: %w", err)
	}
	if err := c.nc.Flush(); err != nil {
		_ = sub.Unsubscribe()
		return nil, fmt.Errorf("queue: serve approvals: %w", err)
	}
	return sub.Unsubscribe, nil
}
