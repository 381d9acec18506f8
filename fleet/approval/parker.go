package approval

import (
	"context"
	"sync"
	"time"

	"github.com/agentfleet/agentfleet/agent/permission"
	"github.com/agentfleet/agentfleet/fleet"
)

// Parker is a session's approver in a fleet: every request parks the
// session, and Pending lists them for the task's WaitingFor. Safe for
// concurrent use (calls of one round may run concurrently).
type Parker struct {
	mu      sync.Mutex
	pending []fleet.PendingApproval
	now     func() time.Time
	timeout time.Duration
}

// NewParker returns a parker whose requests expire after timeout (0 means
// fleet.DefaultApprovalTimeout); now is the clock (nil: time.Now).
func NewParker(timeout time.Duration, now func() time.Time) *Parker {
	if timeout <= 0 {
		timeout = fleet.DefaultApprovalTimeout
	}
	if now == nil {
		now = time.Now
	}
	return &Parker{now: now, timeout: timeout}
}

// Approve notes req and parks the session (permission.ErrPending).
func (p *Parker) Approve(_ context.Context, req permission.Request) (permission.Answer, error) {
	now := p.now()
	p.mu.Lock()
	p.pending = append(p.pending, fleet.PendingApproval{CallID: req.CallID, Tool: req.Tool, Arguments: req.Arguments,
		Rule: req.Rule, Reason: req.Reason, Summary: req.Summary, RequestedAt: now, ExpiresAt: now.Add(p.timeout)})
	p.mu.Unlock()
	return permission.Answer{}, permission.ErrPending
}

// Pending returns the requests noted so far.
func (p *Parker) Pending() []fleet.PendingApproval {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]fleet.PendingApproval(nil), p.pending...)
}

// ForTask returns the permission checker of a task (the operator's policy
// op narrowed by the spec's) and the parker its session asks, whose
// requests expire after timeout. A spec that widens op is a
// *fleet.FieldError naming the field.
func ForTask(op permission.Policy, spec fleet.TaskSpec, timeout time.Duration, now func() time.Time) (*permission.Checker, *Parker, error) {
	var narrow []permission.Policy
	if spec.Permissions != nil {
		if err := spec.PermissionsWithin(op); err != nil {
			return nil, nil, err
		}
		narrow = append(narrow, *spec.Permissions)
	}
	return permission.NewChecker(op, narrow...), NewParker(timeout, now), nil
}
