package queue

import (
	"encoding/json"
	"fmt"
	"time"
)

// MessageType says what a task message asks a worker to do.
type MessageType string

// The task message types.
const (
	// MsgStart starts a queued task (or resumes it from its recorded turns if it ran before).
	MsgStart MessageType = "start"
	// MsgResume wakes a parked (waiting) task because what it waited for has happened.
	MsgResume MessageType = "resume"
	// MsgInput delivers input to a task that is not running; the task runs again with it.
	MsgInput MessageType = "input"
)

// Headers set on every task message, so a message can be traced (and dead-lettered with its
// task id) even when its body cannot be decoded.
const (
	HeaderTaskID  = "Agentfleet-Task-Id"
	HeaderMsgType = "Agentfleet-Msg-Type"
)

// TaskMessage is the small JSON body of a message on TASKS. It names work; it does not carry it:
// the task spec, history and inputs live in the store, so messages stay far below the NATS
// payload limit whatever the prompt.
type TaskMessage struct {
	// Type is start, resume or input.
	Type MessageType `json:"type"`
	// TaskID is the task to run (a subject token, e.g. a UUID).
	TaskID string `json:"task_id"`
	// WaitID identifies the wait a resume ends (required for resume); the fleet makes the
	// resume's message id from it, so children ending together enqueue one resume.
	WaitID string `json:"wait_id,omitempty"`
	// ChildTaskID is the child whose end triggered a resume, when there is one.
	ChildTaskID string `json:"child_task_id,omitempty"`
	// InputID identifies stored input for an input message (the text itself is in the store).
	InputID string `json:"input_id,omitempty"`
	// TraceParent is a stored W3C trace context for the message's
	// Traceparent header, used when the publisher's context holds no span
	// (queue/trace.go). It travels in the header, never in the body.
	TraceParent string `json:"-"`
	// EnqueuedAt is when the message was published; Send fills it when zero. Workers use it for
	// the claim-latency metric.
	EnqueuedAt time.Time `json:"enqueued_at"`
}

// Validate reports what is wrong with a message before it is published.
func (m TaskMessage) Validate() error {
	switch m.Type {
	case MsgStart, MsgResume, MsgInput:
	default:
		return fmt.Errorf("queue: TaskMessage.Type must be %q, %q or %q, got %q", MsgStart, MsgResume, MsgInput, m.Type)
	}
	if !isToken(m.TaskID) {
		return fmt.Errorf("queue: TaskMessage.TaskID must be 1 to 128 letters, digits, '-' or '_', got %q", m.TaskID)
	}
	if m.Type == MsgResume && m.WaitID == "" {
		return fmt.Errorf("queue: TaskMessage.WaitID is required for a resume of task %s", m.TaskID)
	}
	return nil
}

// decodeTaskMessage parses and validates a message body. The error wraps ErrBadMessage.
func decodeTaskMessage(raw []byte) (TaskMessage, error) {
	var m TaskMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return m, fmt.Errorf("%w: %v", ErrBadMessage, err)
	}
	if err := m.Validate(); err != nil {
		return m, fmt.Errorf("%w: %v", ErrBadMessage, err)
	}
	return m, nil
}
