package queue

import (
	"encoding/json"
	"fmt"
	"maps"
	"sort"
	"time"
	"unicode/utf8"
)

// EventVersion is the envelope version this package writes in Event.V.
const EventVersion = 1

// Event is the envelope of one session event on
// <prefix>.events.<tenant>.<root>.<task>.<kind> (docs/architecture.md, Subjects). Seq is gapless per session, starting at 1, so a consumer can detect
// loss and reorder.
type Event struct {
	// V is the envelope version; Publish sets EventVersion when zero.
	V int `json:"v"`
	// ID is unique per event. (SessionID, Seq) identifies it too, in order.
	ID   string `json:"id"`
	Kind string `json:"kind"`
	// Time is when the event happened; Publish sets now when zero.
	Time time.Time `json:"time"`
	// Tenant is the tenant of the task (its spec's); Publish sets
	// DefaultTenant when empty. It is the subject's first token after
	// "events", so a NATS user can be limited to one tenant's events.
	Tenant       string `json:"tenant,omitempty"`
	SessionID    string `json:"session_id"`
	TaskID       string `json:"task_id"`
	RootTaskID   string `json:"root_task_id"`
	ParentTaskID string `json:"parent_task_id,omitempty"`
	Seq          uint64 `json:"seq"`
	// Data is the kind-specific payload, a JSON value. A tool output's data should name its
	// call in a top-level "call_id" field: if the data is too large it is replaced by a
	// LargePayload that refers to that call.
	Data json.RawMessage `json:"data,omitempty"`
}

// validate checks the fields that become subject tokens and the ones every consumer relies on;
// encodeEvent checks Data.
func (e *Event) validate() error {
	if e.ID == "" {
		return fmt.Errorf("queue: event of session %s seq %d has no ID", e.SessionID, e.Seq)
	}
	for _, f := range [][2]string{{"Tenant", e.Tenant}, {"Kind", e.Kind}, {"TaskID", e.TaskID}, {"RootTaskID", e.RootTaskID}, {"SessionID", e.SessionID}} {
		if !isToken(f[1]) {
			return fmt.Errorf("queue: Event.%s must be 1 to 128 letters, digits, '-' or '_', got %q (event %s)", f[0], f[1], e.ID)
		}
	}
	return nil // Data is checked as it is encoded (encodeEvent)
}

// Payload references: what the full text of a large payload is stored as.
const (
	// RefToolOutput: the full output of tool call CallID of session SessionID (store tool outputs).
	RefToolOutput = "tool_output"
	// RefEvent: a payload that is not a tool output; the session's turns hold its content.
	RefEvent = "event"
)

// PayloadRef points at the full text of a payload that was too large for an event.
type PayloadRef struct {
	// Ref is RefToolOutput or RefEvent.
	Ref       string `json:"ref"`
	SessionID string `json:"session_id"`
	CallID    string `json:"call_id,omitempty"`
	// Seq is the event's seq (RefEvent).
	Seq uint64 `json:"seq,omitempty"`
}

// LargePayload is the data of an event whose original data exceeded
// Config.EventPayloadLimit. The small top-level fields of an original JSON object (1 KiB or less
// each, such as call_id, tool_name, is_error) are kept next to these fields, so
// a consumer can decode the same struct it decodes for the kind; Omitted lists the dropped
// fields.
type LargePayload struct {
	// Truncated is always true; it marks the data as a LargePayload.
	Truncated bool `json:"truncated"`
	// Size is the length in bytes of the original data (JSON).
	Size int `json:"size"`
	// Preview is the start of the largest string field (or of the JSON text when there is
	// none), at most Config.EventPreviewBytes, cut at a character boundary.
	Preview string `json:"preview"`
	// Omitted names the fields of the original object left out.
	Omitted []string   `json:"omitted,omitempty"`
	Ref     PayloadRef `json:"ref"`
}

// smallField is the largest field a LargePayload keeps as is.
const smallField = 1 << 10

// shrink returns data unchanged when it fits in limit, else a LargePayload (as JSON).
func shrink(e *Event, limit, preview int) (json.RawMessage, bool) {
	if len(e.Data) <= limit {
		return e.Data, false
	}
	lp := LargePayload{Truncated: true, Size: len(e.Data), Ref: PayloadRef{Ref: RefEvent, SessionID: e.SessionID, Seq: e.Seq}}
	kept := map[string]json.RawMessage{}
	var fields map[string]json.RawMessage
	if json.Unmarshal(e.Data, &fields) == nil {
		budget := limit - preview - smallField
		largest, largestLen := "", -1
		for _, name := range sortedKeys(fields) {
			v := fields[name]
			if len(v) <= smallField && len(v) <= budget {
				kept[name] = v
				budget -= len(name) + len(v)
			} else {
				lp.Omitted = append(lp.Omitted, name)
			}
			if len(v) > largestLen && len(v) > 0 && v[0] == '"' {
				largest, largestLen = name, len(v)
			}
		}
		var callID string
		if json.Unmarshal(fields["call_id"], &callID) == nil && callID != "" {
			lp.Ref = PayloadRef{Ref: RefToolOutput, SessionID: e.SessionID, CallID: callID}
		}
		var s string
		if largest != "" && json.Unmarshal(fields[largest], &s) == nil {
			lp.Preview = cutUTF8(s, preview)
		}
	}
	if lp.Preview == "" {
		lp.Preview = cutUTF8(string(e.Data), preview)
	}
	return mergeObject(kept, lp), true
}

// mergeObject encodes lp with the kept fields of the original next to its own.
func mergeObject(kept map[string]json.RawMessage, lp LargePayload) json.RawMessage {
	own, _ := json.Marshal(lp) // a struct of strings and numbers always encodes
	if len(kept) == 0 {
		return own
	}
	var ownFields map[string]json.RawMessage
	_ = json.Unmarshal(own, &ownFields)
	// our fields win over same-named originals
	maps.Copy(kept, ownFields)
	out, _ := json.Marshal(kept) // raw values that were decoded from valid JSON
	return out
}

func sortedKeys(m map[string]json.RawMessage) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// cutUTF8 returns at most n bytes of s, not splitting a character.
func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
