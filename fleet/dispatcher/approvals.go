package dispatcher

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/agent"
	"github.com/agentfleet/agentfleet/agent/permission"
	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/api"
	"github.com/agentfleet/agentfleet/fleet/approval"
	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/store"
)

// maxApprovalReason bounds the reason of an answer.
const maxApprovalReason = 4 << 10

// Decide records a person's answer to a call pending approval and resumes
// its task (approval.Decide). approval.ErrNotPending (a 409) when the task
// does not wait for that call.
func (d *Dispatcher) Decide(ctx context.Context, dec approval.Decision) (fleet.PendingApproval, error) {
	pa, err := approval.Decide(ctx, d.store, d.queue, dec)
	if err == nil {
		decision := "deny"
		if dec.Approve {
			decision = "approve"
		}
		d.metrics.approvals.WithLabelValues(decision).Inc()
		d.log.Info("approval answered", "task_id", dec.TaskID, "call_id", dec.CallID, "approved", dec.Approve, "by", dec.By)
	}
	return pa, err
}

// sweepApprovals denies expired approvals every ApprovalSweep until ctx
// ends; stop waits for the loop.
func (d *Dispatcher) sweepApprovals(ctx context.Context) (stop func()) {
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(d.cfg.ApprovalSweep)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			now := time.Now()
			res, err := approval.Sweep(ctx, d.store, d.queue, now, now.Add(-2*d.cfg.ApprovalSweep))
			if err != nil && ctx.Err() == nil {
				d.log.Warn("sweeping expired approvals", "err", err)
			}
			d.metrics.approvals.WithLabelValues("expired").Add(float64(res.Expired))
			if res.Expired+res.Requeued > 0 {
				d.log.Info("approvals swept", "expired", res.Expired, "requeued", res.Requeued)
			}
		}
	})
	return wg.Wait
}

func (a *handlers) approve(w http.ResponseWriter, r *http.Request) {
	t, ok := a.loadTask(w, r)
	if !ok {
		return
	}
	id := t.ID
	callID := r.PathValue("call_id")
	var req api.ApprovalRequest
	if !decodeBody(w, r, maxSmallBody, "body", &req) {
		return
	}
	switch {
	case req.Decision != api.DecisionApprove && req.Decision != api.DecisionDeny:
		badRequestf(w, "decision", "%q is unknown, want approve or deny", req.Decision)
		return
	case len(req.Reason) > maxApprovalReason:
		badRequestf(w, "reason", "is %d bytes, more than %d", len(req.Reason), maxApprovalReason)
		return
	case strings.TrimSpace(callID) == "":
		badRequestf(w, "call_id", "is required: the call_id of the pending call (GET /v1/tasks/{id}/permissions lists them)")
		return
	}
	p := principal(r)
	if req.By != "" && req.By != p.ID && req.By != p.Name {
		badRequestf(w, "by", "%q is not accepted: the approver recorded is the authenticated principal (%s); leave by out", req.By, p.ID)
		return
	}
	noteAction(r, "approval."+req.Decision, id.String()+"/"+callID)
	pa, err := a.svc.Decide(r.Context(), approval.Decision{TaskID: id, CallID: callID, Approve: req.Decision == api.DecisionApprove,
		Reason: req.Reason, Remember: req.Remember, By: p.ID})
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, api.ApprovalResponse{Call: pa, Decision: req.Decision})
}

func (a *handlers) permissions(w http.ResponseWriter, r *http.Request) {
	t, ok := a.loadTask(w, r)
	if !ok {
		return
	}
	view := api.PermissionsView{Pending: []fleet.PendingApproval{}, Records: []permission.Record{}}
	if t.State == store.TaskWaiting {
		if wf, err := fleet.DecodeWaitingFor(t.WaitingFor); err == nil && wf.Approvals != nil {
			view.Pending = wf.Approvals
		}
	}
	turns, err := a.reads.LoadTurns(r.Context(), store.LoadTurnsParams{SessionID: t.ID})
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		a.fail(w, r, err)
		return
	}
	for _, turn := range turns {
		if turn.Kind != string(agent.TurnPermission) {
			continue
		}
		var p agent.Turn
		if json.Unmarshal(turn.Payload, &p) == nil && p.Permission != nil {
			view.Records = append(view.Records, *p.Permission)
		}
	}
	writeJSON(w, http.StatusOK, view)
}

// serveApprovals answers approve and deny requests on the approvals
// control subject (queue.ServeApprovals) until stop is called.
func (d *Dispatcher) serveApprovals() (stop func() error, err error) {
	return d.queue.ServeApprovals(func(ctx context.Context, req queue.ControlRequest) queue.ControlReply {
		id, err := uuid.Parse(req.TaskID)
		if err != nil {
			return queue.ControlReply{Error: fmt.Sprintf("task_id %q is not a task id (a UUID)", req.TaskID)}
		}
		// Over NATS the sender is not authenticated here (its NATS user
		// is, by the server's permissions): the record says "nats", and
		// the name the message claims goes to the log only.
		d.log.Info("approval answered over NATS", "task_id", id, "call_id", req.CallID, "claimed_by", req.By)
		_, err = d.Decide(ctx, approval.Decision{TaskID: id, CallID: req.CallID, Approve: req.Op == queue.OpApprove,
			Reason: req.Reason, Remember: req.Remember, By: "nats"})
		if err != nil {
			return queue.ControlReply{Error: err.Error()}
		}
		return queue.ControlReply{OK: true}
	})
}
