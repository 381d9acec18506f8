package queue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
)

// ControlOp is what a control request asks of a running session.
type ControlOp string

// The control operations.
const (
	// OpSteer injects Message between tool rounds of the current input.
	OpSteer ControlOp = "steer"
	// OpFollowUp queues Message as the next input once the current one is done.
	OpFollowUp ControlOp = "follow_up"
	// OpAbort stops the session.
	OpAbort ControlOp = "abort"
	// OpConfigure changes ReasoningEffort, Model and/or CommandTimeout from
	// the next turn on.
	OpConfigure ControlOp = "configure"
	// OpStatus asks for the session's status.
	OpStatus ControlOp = "status"
	// OpCompact asks the session to compact its context before its next
	// model call.
	OpCompact ControlOp = "compact"
)

// ControlRequest is the JSON body of a request on
// <prefix>.control.<tenant>.<session> (or, for approve and deny, on
// <prefix>.control.approvals).
type ControlRequest struct {
	Op              ControlOp `json:"op"`
	Message         string    `json:"message,omitempty"`
	ReasoningEffort string    `json:"reasoning_effort,omitempty"`
	Model           string    `json:"model,omitempty"`
	// CommandTimeout (configure) is the new default command timeout.
	CommandTimeout time.Duration `json:"command_timeout_ns,omitempty"`
	// TaskID, CallID, Reason, Remember and By are an approve or deny on
	// the approvals subject (see ServeApprovals).
	TaskID   string `json:"task_id,omitempty"`
	CallID   string `json:"call_id,omitempty"`
	Reason   string `json:"reason,omitempty"`
	Remember bool   `json:"remember,omitempty"`
	By       string `json:"by,omitempty"`
}

// Validate reports what is wrong with a request.
func (r ControlRequest) Validate() error {
	switch r.Op {
	case OpSteer, OpFollowUp:
		if r.Message == "" {
			return fmt.Errorf("queue: ControlRequest.Message is required for %s", r.Op)
		}
	case OpConfigure:
		if r.ReasoningEffort == "" && r.Model == "" && r.CommandTimeout == 0 {
			return errors.New("queue: ControlRequest for configure needs ReasoningEffort, Model or CommandTimeout")
		}
		if r.CommandTimeout < 0 {
			return fmt.Errorf("queue: ControlRequest.CommandTimeout must be > 0, got %s", r.CommandTimeout)
		}
	case OpAbort, OpStatus, OpCompact:
	case OpApprove, OpDeny:
		if r.TaskID == "" || r.CallID == "" {
			return fmt.Errorf("queue: ControlRequest for %s needs TaskID and CallID", r.Op)
		}
	default:
		return fmt.Errorf("queue: ControlRequest.Op must be steer, follow_up, abort, configure, status, compact, approve or deny, got %q", r.Op)
	}
	return nil
}

// SessionStatus describes a running session, in replies to status (and to any op, if the
// handler likes).
type SessionStatus struct {
	SessionID       string `json:"session_id"`
	TaskID          string `json:"task_id,omitempty"`
	State           string `json:"state"`
	Model           string `json:"model,omitempty"`
	ReasoningEffort string `json:"reasoning_effort,omitempty"`
	// CommandTimeoutMs is the session's default command timeout.
	CommandTimeoutMs int64  `json:"command_timeout_ms,omitempty"`
	Turns            int    `json:"turns"`
	WorkerID         string `json:"worker_id,omitempty"`
}

// ControlReply is the JSON body of the reply.
type ControlReply struct {
	OK     bool           `json:"ok"`
	Error  string         `json:"error,omitempty"`
	Status *SessionStatus `json:"status,omitempty"`
}

// ControlHandler answers a valid control request for one session. It runs on the
// subscription's goroutine, one request at a time, so it should hand the request to the session
// and return; ctx ends after Config.ControlTimeout.
type ControlHandler func(ctx context.Context, req ControlRequest) ControlReply

// ServeControl answers control requests for session sessionID of tenant
// with h until stop is called. A worker serves a session's control subject
// (Subjects.Control) while it runs the session; when nobody serves it,
// requesters get ErrNotRunning. Invalid requests are answered with
// ok=false without calling h. The tenant must be the task's: a requester
// names it too, and a worker pool's NATS user may subscribe only to its
// tenants' subjects.
func (c *Client) ServeControl(tenant, sessionID string, h ControlHandler) (stop func() error, err error) {
	subject, err := c.controlSubject(tenant, sessionID)
	if err != nil {
		return nil, err
	}
	sub, err := c.nc.Subscribe(subject, func(m *nats.Msg) {
		reply := c.answer(m.Data, h)
		body, _ := json.Marshal(reply) // strings, bools and ints always encode
		_ = m.Respond(body)            // the requester may have gone; nothing to do then
	})
	if err != nil {
		return nil, fmt.Errorf("queue: serve control of session %s: %w", sessionID, err)
	}
	// Make sure the server knows the subscription before the session is announced as running.
	if err := c.nc.Flush(); err != nil {
		_ = sub.Unsubscribe()
		return nil, fmt.Errorf("queue: serve control of session %s: %w", sessionID, err)
	}
	return func() error {
		err := sub.Unsubscribe()
		if errors.Is(err, nats.ErrBadSubscription) || errors.Is(err, nats.ErrConnectionClosed) {
			return nil // stopped before, or the connection is gone with the subscription
		}
		if err == nil {
			// Once the server has the unsubscribe, requesters get ErrNotRunning at once.
			err = c.nc.Flush()
		}
		if err != nil {
			return fmt.Errorf("queue: stop control of session %s: %w", sessionID, err)
		}
		return nil
	}, nil
}

// controlSubject checks a tenant and a session id (each one subject token)
// and returns their control subject.
func (c *Client) controlSubject(tenant, sessionID string) (string, error) {
	if err := CheckTenant(tenant); err != nil {
		return "", err
	}
	if err := checkToken("session id", sessionID); err != nil {
		return "", err
	}
	return c.subj.Control(tenant, sessionID), nil
}

func (c *Client) answer(data []byte, h ControlHandler) ControlReply {
	var req ControlRequest
	if err := json.Unmarshal(data, &req); err != nil {
		return ControlReply{Error: "control request is not valid JSON: " + err.Error()}
	}
	if err := req.Validate(); err != nil {
		return ControlReply{Error: err.Error()}
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.cfg.ControlTimeout)
	defer cancel()
	return h(ctx, req)
}

// Control sends req to the worker running session sessionID of tenant and
// returns its reply. It returns ErrNotRunning when no worker serves the
// session, an error wrapping ErrControlRefused (with the reply) when the
// handler answered ok=false, and a timeout after Config.ControlTimeout when
// ctx has no earlier deadline.
func (c *Client) Control(ctx context.Context, tenant, sessionID string, req ControlRequest) (ControlReply, error) {
	subject, err := c.controlSubject(tenant, sessionID)
	if err != nil {
		return ControlReply{}, err
	}
	return c.request(ctx, subject, "session "+sessionID, req)
}

// request sends req on subject and decodes the reply; what names the
// target in errors.
func (c *Client) request(ctx context.Context, subject, what string, req ControlRequest) (ControlReply, error) {
	if err := req.Validate(); err != nil {
		return ControlReply{}, err
	}
	body, err := json.Marshal(req)
	if err != nil {
		return ControlReply{}, fmt.Errorf("queue: encode control request: %w", err)
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.cfg.ControlTimeout)
		defer cancel()
	}
	msg, err := c.nc.RequestWithContext(ctx, subject, body)
	if errors.Is(err, nats.ErrNoResponders) {
		return ControlReply{}, fmt.Errorf("%w: %s", ErrNotRunning, what)
	}
	if err != nil {
		return ControlReply{}, fmt.Errorf("queue: control %s of %s: %w", req.Op, what, err)
	}
	var reply ControlReply
	if err := json.Unmarshal(msg.Data, &reply); err != nil {
		return ControlReply{}, fmt.Errorf("queue: control reply of %s is not valid JSON: %w", what, err)
	}
	if !reply.OK {
		return reply, fmt.Errorf("%w: %s: %s", ErrControlRefused, what, reply.Error)
	}
	return reply, nil
}
