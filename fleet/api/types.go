// Package api holds the wire types of the dispatcher's HTTP API
// (docs/api.md, docs/openapi.yaml): request and response bodies, error
// codes, statistics and the end message of an event stream. The
// dispatcher serves them and package client decodes them; neither side
// owns them.
package api

import (
	"encoding/json"
	"time"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/store"
)

// TaskView is a task as the API shows it.
type TaskView struct {
	ID             uuid.UUID         `json:"id"`
	ParentID       uuid.UUID         `json:"parent_id,omitzero"`
	RootID         uuid.UUID         `json:"root_id"`
	Depth          int               `json:"depth"`
	State          store.TaskState   `json:"state"`
	Queue          string            `json:"queue"`
	Priority       int               `json:"priority"`
	Spec           json.RawMessage   `json:"spec,omitempty"`
	Result         json.RawMessage   `json:"result,omitempty"`
	Error          string            `json:"error,omitempty"`
	Attempts       int               `json:"attempts"`
	WorkerID       string            `json:"worker_id,omitempty"`
	IdempotencyKey string            `json:"idempotency_key,omitempty"`
	Labels         map[string]string `json:"labels,omitempty"`
	CreatedAt      time.Time         `json:"created_at"`
	UpdatedAt      time.Time         `json:"updated_at"`
	StartedAt      time.Time         `json:"started_at,omitzero"`
	HeartbeatAt    time.Time         `json:"heartbeat_at,omitzero"`
	FinishedAt     time.Time         `json:"finished_at,omitzero"`
	// WaitingFor is what a waiting task waits for (fleet.WaitingFor:
	// children, calls pending approval).
	WaitingFor json.RawMessage `json:"waiting_for,omitempty"`
	// Tenant is the task's tenant; SubmittedBy the principal that
	// submitted its root ("" for tasks stored before principals).
	Tenant      string `json:"tenant"`
	SubmittedBy string `json:"submitted_by,omitempty"`
	// Outcome is how the pull request of a task a forge started ended:
	// "merged" or "closed" (its forge's webhook said so; the task stays
	// succeeded). Empty otherwise, and in listings (GET /v1/tasks/{id}
	// reads it).
	Outcome string `json:"outcome,omitempty"`
}

// NewTaskView converts a stored task.
func NewTaskView(t store.Task) TaskView {
	return TaskView{
		ID: t.ID, ParentID: t.ParentID, RootID: t.RootID, Depth: t.Depth, State: t.State, Queue: t.Queue,
		Priority: t.Priority, Spec: t.Spec, Result: t.Result, Error: t.Error, Attempts: t.Attempts,
		WorkerID: t.WorkerID, IdempotencyKey: t.IdempotencyKey, Labels: t.Labels, CreatedAt: t.CreatedAt,
		UpdatedAt: t.UpdatedAt, StartedAt: t.StartedAt, HeartbeatAt: t.HeartbeatAt, FinishedAt: t.FinishedAt,
		WaitingFor: t.WaitingFor, Tenant: t.Tenant, SubmittedBy: t.SubmittedBy,
	}
}

// TaskResult decodes the task's result; ok is false while there is none.
func (v TaskView) TaskResult() (fleet.TaskResult, bool) { return fleet.DecodeResult(v.Result) }

// SubmitResponse answers POST /v1/tasks.
type SubmitResponse struct {
	Task     TaskView `json:"task"`
	Existing bool     `json:"existing"` // the idempotency key matched an earlier task
}

// BatchRequest is the body of POST /v1/tasks/batch.
type BatchRequest struct {
	Tasks []fleet.TaskSpec `json:"tasks"`
}

// SubmittedTask is one task of a BatchResponse.
type SubmittedTask struct {
	ID             uuid.UUID       `json:"id"`
	State          store.TaskState `json:"state"`
	Existing       bool            `json:"existing"`
	IdempotencyKey string          `json:"idempotency_key,omitempty"`
}

// BatchResponse answers POST /v1/tasks/batch, in the order of the request.
type BatchResponse struct {
	Tasks []SubmittedTask `json:"tasks"`
}

// TaskList answers GET /v1/tasks.
type TaskList struct {
	Tasks      []TaskView `json:"tasks"`
	NextCursor string     `json:"next_cursor,omitempty"`
}

// TaskTree answers GET /v1/tasks/{id}/tree: the tree's tasks by depth then
// creation, the root first.
type TaskTree struct {
	RootID uuid.UUID  `json:"root_id"`
	Tasks  []TaskView `json:"tasks"`
}

// CancelRequest is the optional body of POST /v1/tasks/{id}/cancel.
type CancelRequest struct {
	Reason string `json:"reason,omitempty"`
}

// CancelledView is one cancelled task.
type CancelledView struct {
	ID   uuid.UUID       `json:"id"`
	From store.TaskState `json:"from"`
}

// CancelResponse answers a cancel.
type CancelResponse struct {
	Cancelled []CancelledView `json:"cancelled"`
	Aborted   int             `json:"aborted"`
}

// MessageRequest is the body of steer and follow_up.
type MessageRequest struct {
	Message string `json:"message"`
}

// ConfigureRequest is the body of configure.
type ConfigureRequest struct {
	ReasoningEffort string `json:"reasoning_effort,omitempty"`
	Model           string `json:"model,omitempty"`
	// CommandTimeout is the new default command timeout ("2m" or seconds),
	// at most the session's max_command_timeout.
	CommandTimeout fleet.Duration `json:"command_timeout,omitempty"`
}

// ControlResponse answers steer, follow_up and configure.
type ControlResponse struct {
	OK     bool                 `json:"ok"`
	Status *queue.SessionStatus `json:"status,omitempty"`
	// Reopened says a follow-up reopened an ended task (202): it is queued
	// again and Round is the round the input starts (the first run is
	// round 1, the first follow-up of the ended task round 2).
	Reopened bool `json:"reopened,omitempty"`
	Round    int  `json:"round,omitempty"`
}

// SessionView is a session of a task.
type SessionView struct {
	ID        uuid.UUID   `json:"id"`
	TaskID    uuid.UUID   `json:"task_id"`
	Profile   string      `json:"profile"`
	Provider  string      `json:"provider,omitempty"`
	Model     string      `json:"model,omitempty"`
	State     string      `json:"state"`
	LastSeq   int64       `json:"last_seq"`
	Usage     store.Usage `json:"usage"`
	CostUSD   float64     `json:"cost_usd"`
	CreatedAt time.Time   `json:"created_at"`
	UpdatedAt time.Time   `json:"updated_at"`
}

// SessionList answers GET /v1/tasks/{id}/sessions, oldest first.
type SessionList struct {
	Sessions []SessionView `json:"sessions"`
}

// TurnView is one stored turn.
type TurnView struct {
	Seq       int64           `json:"seq"`
	Kind      string          `json:"kind"`
	Payload   json.RawMessage `json:"payload"`
	Usage     json.RawMessage `json:"usage,omitempty"`
	CreatedAt time.Time       `json:"created_at"`
}

// TurnList answers GET /v1/sessions/{id}/turns. NextAfter is the after=
// value of the next page, 0 when this page is the last.
type TurnList struct {
	Turns     []TurnView `json:"turns"`
	NextAfter int64      `json:"next_after,omitempty"`
}

// ToolOutputView is the full output of one tool call.
type ToolOutputView struct {
	SessionID uuid.UUID `json:"session_id"`
	CallID    string    `json:"call_id"`
	Tool      string    `json:"tool"`
	Output    string    `json:"output"`
	IsError   bool      `json:"is_error"`
	Size      int64     `json:"size"`
	CreatedAt time.Time `json:"created_at"`
}

// ArtifactView describes an artifact; GET .../artifacts/{kind} returns its
// content as is.
type ArtifactView struct {
	Kind        string    `json:"kind"`
	Name        string    `json:"name,omitempty"`
	ContentType string    `json:"content_type"`
	Size        int64     `json:"size"`
	CreatedAt   time.Time `json:"created_at"`
}

// ArtifactList answers GET /v1/tasks/{id}/artifacts.
type ArtifactList struct {
	Artifacts []ArtifactView `json:"artifacts"`
}

// ErrorBody is the body of every error response.
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail says what went wrong: Field names the offending field of a
// 400 ("spec.limits.max_turns", "tasks[3].prompt", "state").
type ErrorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Field   string `json:"field,omitempty"`
	Index   *int   `json:"index,omitempty"` // the task of a batch
}

// Error codes of ErrorDetail.Code.
const (
	CodeInvalid      = "invalid"       // 400
	CodeUnauthorized = "unauthorized"  // 401
	CodeForbidden    = "forbidden"     // 403
	CodeNotFound     = "not_found"     // 404
	CodeNotRunning   = "not_running"   // 409: no running session to control
	CodeConflict     = "conflict"      // 409: e.g. cancel of a finished task
	CodeTooLarge     = "too_large"     // 413
	CodeUnavailable  = "unavailable"   // 503
	CodeInternal     = "internal"      // 500
	CodeTimeout      = "timeout"       // 504
	CodeNotSupported = "not_supported" // 405
	// CodeUnsupportedMediaType: a POST, PUT or PATCH without
	// Content-Type: application/json (415).
	CodeUnsupportedMediaType = "unsupported_media_type"
)

// MaxBatch is the largest batch POST /v1/tasks/batch accepts.
const MaxBatch = 10_000

// EndEvent is the SSE event name of the message that closes a finished
// task's event stream; its data is a StreamEnd.
const EndEvent = "end"

// StreamEnd is the data of the "end" message of a task's event stream.
type StreamEnd struct {
	TaskID uuid.UUID       `json:"task_id"`
	State  store.TaskState `json:"state"`
	Error  string          `json:"error,omitempty"`
}

// QueueStats is the backlog of one queue in Stats.
type QueueStats struct {
	Queue      string `json:"queue"`
	Pending    uint64 `json:"pending"`
	AckPending int    `json:"ack_pending"`
	Waiting    int    `json:"waiting_pulls"`
	Lag        uint64 `json:"lag"`
	Error      string `json:"error,omitempty"` // e.g. no worker has served the queue yet
}

// Stats is the body of GET /v1/stats.
type Stats struct {
	Counts map[store.TaskState]int64 `json:"counts"`
	Queues []QueueStats              `json:"queues"`
	// FinishedPerSecond is the rate at which tasks reached a final state
	// over WindowSeconds (0 until two samples were taken).
	FinishedPerSecond float64 `json:"finished_per_s"`
	WindowSeconds     float64 `json:"window_s"`
	// Enqueued and EnqueueDuplicates count this dispatcher's publishes.
	Enqueued          uint64 `json:"enqueued"`
	EnqueueDuplicates uint64 `json:"enqueue_duplicates"`
}
