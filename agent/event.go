package agent

import (
	"context"
	"encoding/json"
	"iter"
	"time"

	"github.com/agentfleet/agentfleet/agent/internal/fanout"
	"github.com/agentfleet/agentfleet/agent/permission"
	"github.com/agentfleet/agentfleet/llm"
)

// EventKind names a session event; the package doc (Events and back-pressure)
// says when each is emitted and which may be dropped.
type EventKind string

const (
	EventSessionStart       EventKind = "SESSION_START"
	EventSessionEnd         EventKind = "SESSION_END"
	EventUserInput          EventKind = "USER_INPUT"
	EventAssistantTextStart EventKind = "ASSISTANT_TEXT_START"
	EventAssistantTextDelta EventKind = "ASSISTANT_TEXT_DELTA"
	EventAssistantTextEnd   EventKind = "ASSISTANT_TEXT_END"
	EventToolCallStart      EventKind = "TOOL_CALL_START"
	EventToolCallOutput     EventKind = "TOOL_CALL_OUTPUT_DELTA"
	EventToolCallEnd        EventKind = "TOOL_CALL_END"
	EventSteeringInjected   EventKind = "STEERING_INJECTED"
	EventTurnLimit          EventKind = "TURN_LIMIT"
	EventLoopDetection      EventKind = "LOOP_DETECTION"
	EventError              EventKind = "ERROR"
	// EventWarning: context use above 80% of the profile's window, or a
	// hook's warning (a hook that failed, an extension that did not start).
	EventWarning EventKind = "WARNING"
	// EventInputDone: one input (with its follow-ups) finished; State says where
	// the session is now, Stop why the loop ended.
	EventInputDone EventKind = "INPUT_DONE"
	// EventParked: the session was parked (see ErrParked).
	EventParked EventKind = "PARKED"
	// EventApprovalRequested: the policy asks a person about a call
	// (Permission: tool, rule, reason, summary; Arguments in full).
	EventApprovalRequested EventKind = "APPROVAL_REQUESTED"
	// EventPermissionDenied: a call was refused (Permission: tool, rule,
	// reason, summary); the model gets an error result saying why.
	EventPermissionDenied EventKind = "PERMISSION_DENIED"
	// EventContextEstimate: the estimated size of the request about to be
	// sent (Context). Droppable.
	EventContextEstimate EventKind = "CONTEXT_ESTIMATE"
	// EventCompactionStart and EventCompactionEnd bracket a compaction
	// (Context: reason, strategies, tokens before and after).
	EventCompactionStart EventKind = "COMPACTION_START"
	EventCompactionEnd   EventKind = "COMPACTION_END"
)

// droppable reports whether an event may be dropped for a slow subscriber.
func (k EventKind) droppable() bool {
	return k == EventAssistantTextDelta || k == EventToolCallOutput || k == EventContextEstimate
}

// Subscription receives a session's events in order (Session.Subscribe).
// Each has its own queue: deltas (ASSISTANT_TEXT_DELTA,
// TOOL_CALL_OUTPUT_DELTA, CONTEXT_ESTIMATE) are dropped and counted when
// Config.EventBuffer events are waiting; every other event is always
// queued. Safe for one reader; Close may be called from any goroutine.
type Subscription struct{ sub *fanout.Subscription[Event] }

// Next waits for the next event. It is false once the session has closed
// (after SESSION_END was delivered), the subscription was closed, or ctx
// ended.
func (s *Subscription) Next(ctx context.Context) (Event, bool) { return s.sub.Next(ctx) }

// All iterates the events until Next would be false.
func (s *Subscription) All(ctx context.Context) iter.Seq[Event] { return s.sub.All(ctx) }

// Dropped counts the deltas dropped because the reader fell behind.
func (s *Subscription) Dropped() int64 { return s.sub.Dropped() }

// Close stops delivery and discards what is queued.
func (s *Subscription) Close() { s.sub.Close() }

// newEventHub returns the hub a session emits through: it stamps each event
// with its gapless Seq, the clock's time and the session id, and lets slow
// subscribers drop the droppable kinds.
func newEventHub(sessionID string, clock Clock, buffer int) *fanout.Hub[Event] {
	return fanout.New(fanout.Config[Event]{
		Buffer:    buffer,
		Droppable: func(ev Event) bool { return ev.Kind.droppable() },
		Stamp: func(ev Event, seq uint64) Event {
			ev.Seq, ev.Time, ev.SessionID = seq, clock.Now(), sessionID
			return ev
		},
	})
}

// Event is one thing that happened in a session. Seq is gapless per session
// (a subscriber that dropped deltas sees gaps only where deltas were). Kind
// says which of the optional fields are set.
type Event struct {
	Seq       uint64    `json:"seq"`
	Kind      EventKind `json:"kind"`
	Time      time.Time `json:"time"`
	SessionID string    `json:"session_id"`

	// Text: user input, steering, text delta, the full text at END, a warning,
	// the final text at INPUT_DONE.
	Text      string `json:"text,omitempty"`
	Reasoning string `json:"reasoning,omitempty"`

	ToolName  string          `json:"tool_name,omitempty"`
	CallID    string          `json:"call_id,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// Output is the FULL tool output at TOOL_CALL_END (the model sees Content
	// of the result, which may be truncated) and a chunk at OUTPUT_DELTA.
	Output    string `json:"output,omitempty"`
	IsError   bool   `json:"is_error,omitempty"`
	Truncated bool   `json:"truncated,omitempty"`

	Round int        `json:"round,omitempty"`
	Turns int        `json:"turns,omitempty"`
	State State      `json:"state,omitempty"`
	Stop  StopReason `json:"stop,omitempty"`
	Usage *llm.Usage `json:"usage,omitempty"`
	// Error and ErrorKind describe an ERROR event (ErrorKind is the llm error kind when there is one).
	Error     string        `json:"error,omitempty"`
	ErrorKind llm.ErrorKind `json:"error_kind,omitempty"`
	// ContextPercent is the estimated context use at WARNING.
	ContextPercent int `json:"context_percent,omitempty"`
	// Permission describes APPROVAL_REQUESTED and PERMISSION_DENIED.
	Permission *permission.Record `json:"permission,omitempty"`
	// Context describes the window at CONTEXT_ESTIMATE and compactions.
	Context *ContextInfo `json:"context,omitempty"`
}
