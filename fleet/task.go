package fleet

import (
	"encoding/json"
	"fmt"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/store"
)

// TaskResult is the outcome of a task, stored as the task's result.
type TaskResult struct {
	FinalText string    `json:"final_text"`
	Success   bool      `json:"success"`
	TurnsUsed int       `json:"turns_used"`
	Usage     llm.Usage `json:"usage"`
	CostUSD   float64   `json:"cost_usd"`
	Error     string    `json:"error,omitempty"`
	// Checks records every run of the spec's checks (spec_checks.go).
	Checks *CheckReport `json:"checks,omitempty"`
	// Delivery records the branch, commit and request (spec_delivery.go).
	Delivery *DeliveryResult `json:"delivery,omitempty"`
	// Sandbox is what confined a local task's commands ("bwrap, network
	// none", "off"); "" for SSH tasks.
	Sandbox string `json:"sandbox,omitempty"`
	// Structured is the final answer as JSON when the spec has a
	// result_schema and the answer matched it (spec_result.go).
	Structured json.RawMessage `json:"structured,omitempty"`
	// Attempts records the attempts of a best-of-N task (spec_attempts.go).
	Attempts *AttemptsResult `json:"attempts,omitempty"`
}

// DecodeSpec is the one way to read a stored task spec (store.Task.Spec):
// it decodes the JSON and fills the defaults a spec stored by an older
// version may lack. A spec that does not decode is an error naming why;
// callers fail the task with ReasonBadSpec rather than guess.
func DecodeSpec(raw []byte) (TaskSpec, error) {
	var s TaskSpec
	if err := json.Unmarshal(raw, &s); err != nil {
		return TaskSpec{}, fmt.Errorf("the task spec is not valid JSON: %w", err)
	}
	return s.WithDefaults(), nil
}

// DecodeResult reads a stored task result; ok is false while the task has
// none (or it does not decode).
func DecodeResult(raw []byte) (r TaskResult, ok bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return r, false
	}
	return r, json.Unmarshal(raw, &r) == nil
}

// Reasons a task ended, stored as store.Task.Error (the detail goes to the
// result's Error).
const (
	ReasonDeadLetter     = "dead_letter"     // its message exhausted its deliveries or was terminated
	ReasonCorruptMessage = "corrupt_message" // its queue message could not be decoded
	ReasonBadSpec        = "bad_spec"        // its stored spec could not be decoded
	ReasonNotAllowed     = "not_allowed"     // the worker's policy refuses its profile or model
	ReasonEnvironment    = "environment"     // its environment can never be built
	ReasonModelError     = "model_error"     // a permanent model error
	ReasonStoreError     = "store_error"     // the store refused its history for good (a temporary failure is waited out)
	ReasonTurnLimit      = "turn_limit"      // the turn or tool-round limit ended it
	ReasonNoProgress     = "no_progress"     // the progress watchdog stopped it: rounds that changed nothing
	ReasonAborted        = "aborted"         // aborted over control
	ReasonCancelled      = "cancelled"       // cancelled in the store
	ReasonParentEnded    = "parent_ended"    // its parent ended and its child policy is cancel
	// ReasonParentCancelled: the task was created under a parent that was
	// cancelled (its session spawned it before its abort arrived), so the
	// store refused its claim and the worker cancelled it unstarted.
	ReasonParentCancelled = "parent_cancelled"
	// ReasonTenantNotServed: a worker pool claimed a task of a tenant it
	// does not serve (worker `tenants`), a misconfiguration of the queues
	// (the dispatcher's policy.tenant_queues, the pool's queues); it was
	// not run.
	ReasonTenantNotServed = "tenant_not_served"
)

// WaitingFor is what a parked (waiting) task waits for, stored as
// store.Task.WaitingFor.
type WaitingFor struct {
	// WaitID names this park; it makes the resume's message id
	// deterministic (the router's, fleet/internal/taskops), so children ending together wake
	// the parent once. It is the claim attempt that parked.
	WaitID string `json:"wait_id"`
	// Children are the child task ids whose end wakes the task.
	Children []uuid.UUID `json:"children"`
	// Approvals are the tool calls waiting for a person's answer; an
	// answer (or an expiry) wakes the task (see approvals.go).
	Approvals []PendingApproval `json:"approvals,omitempty"`
	// FirstPass ends the wait at the first child that succeeded, or when
	// every child has ended (a best-of-N task waiting for its attempts).
	FirstPass bool `json:"first_pass,omitempty"`
}

// DecodeWaitingFor is the one way to read what a waiting task waits for
// (store.Task.WaitingFor). Empty input (or JSON null) is the zero value:
// a task that is not waiting stores none. Input that does not decode is
// an error naming why; the caller decides whether that task is skipped
// or failed.
func DecodeWaitingFor(raw []byte) (WaitingFor, error) {
	var wf WaitingFor
	if len(raw) == 0 || string(raw) == "null" {
		return wf, nil
	}
	if err := json.Unmarshal(raw, &wf); err != nil {
		return WaitingFor{}, fmt.Errorf("waiting_for is not a JSON object with wait_id, children and approvals (as a worker parks a task): %w", err)
	}
	return wf, nil
}

// KindSessionEnd is the envelope kind a worker publishes, confirmed, once a
// task has reached its final state; its data is a SessionEndData. It has
// the name of the agent's SESSION_END event, which the worker does not
// forward (a session object closes on every park and hand-back too).
const KindSessionEnd = "SESSION_END"

// SessionEndData is the data of the final SESSION_END envelope.
type SessionEndData struct {
	State  store.TaskState `json:"state"`
	Reason string          `json:"reason,omitempty"`
	Result TaskResult      `json:"result"`
}

// SessionSubject is the control address of a task's session (the last
// token of <prefix>.control.<tenant>.<session>): a task has one session,
// whose id is the task's, so it is reachable before its first turn is
// recorded. The tenant token is SessionTenant's.
func SessionSubject(task uuid.UUID) string { return task.String() }

// SessionTenant is the tenant token of a task's control subject
// (queue.Subjects.Control): the task's tenant, DefaultTenant for a task
// stored before tasks named one. The worker serves, and every requester
// (dispatcher, completer, a parent's spawner) addresses, this subject.
func SessionTenant(t store.Task) string {
	if t.Tenant == "" {
		return DefaultTenant
	}
	return t.Tenant
}
