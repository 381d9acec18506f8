package queue

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/nats-io/nats.go"
)

// Approval operations, sent to the approvals subject (AnswerApproval)
// rather than to a session:
// a session waiting for an approval is parked and nobody serves its own
// control subject.
const (
	// OpApprove approves the pending call CallID of task TaskID.
	OpApprove ControlOp = "approve"
	// OpDeny denies it, telling the model Reason.
	OpDeny ControlOp = "deny"
)

// ApprovalsSession is the name under the control prefix where approvals
// are answered: <prefix>.control.approvals. A session's subject has two
// tokens there (<tenant>.<session>), so no tenant or session name collides
// with it.
const ApprovalsSession = "approvals"

// approvalsGroup is the queue group of the approvals subject: one
// dispatcher answers each request.
const approvalsGroup = "dispatchers"

// ServeApprovals answers approve and deny requests on
// <prefix>.control.approvals with h until stop is called, one server of
// the queue group per request. Requesters use AnswerApproval. Other ops and invalid requests are answered with
// ok=false without calling h.
func (c *Client) ServeApprovals(h ControlHandler) (stop func() error, err error) {
	sub, err := c.nc.QueueSubscribe(c.subj.Approvals(), approvalsGroup, func(m *nats.Msg) {
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

// AnswerApproval sends an approve or deny to the dispatchers serving the
// approvals subject and returns the reply, with Control's errors.
func (c *Client) AnswerApproval(ctx context.Context, req ControlRequest) (ControlReply, error) {
	if req.Op != OpApprove && req.Op != OpDeny {
		return ControlReply{}, fmt.Errorf("queue: the approvals subject takes approve and deny, not %q", req.Op)
	}
	return c.request(ctx, c.subj.Approvals(), "the approvals subject", req)
}
