package queue

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"
)

// encodeEvent returns e as JSON, byte for byte what json.Marshal(e) returns,
// written field by field: json.Marshal reads the struct by reflection and
// scans Data twice (a check, then a compaction), and every event of every
// session goes through here, so this is the publisher's largest cost. An
// invalid Data is an error naming the event, as validate's was.
func encodeEvent(e *Event) ([]byte, error) {
	b := make([]byte, 0, 256+len(e.Data))
	b = append(b, `{"v":`...)
	b = strconv.AppendInt(b, int64(e.V), 10)
	b = appendField(b, "id", e.ID)
	b = appendField(b, "kind", e.Kind)
	b = append(b, `,"time":`...)
	var err error
	if b, err = appendTime(b, e.Time); err != nil {
		return nil, fmt.Errorf("queue: encode event %s: %w", e.ID, err)
	}
	if e.Tenant != "" {
		b = appendField(b, "tenant", e.Tenant)
	}
	b = appendField(b, "session_id", e.SessionID)
	b = appendField(b, "task_id", e.TaskID)
	b = appendField(b, "root_task_id", e.RootTaskID)
	if e.ParentTaskID != "" {
		b = appendField(b, "parent_task_id", e.ParentTaskID)
	}
	b = append(b, `,"seq":`...)
	b = strconv.AppendUint(b, e.Seq, 10)
	if len(e.Data) > 0 {
		b = append(b, `,"data":`...)
		if b, err = appendRaw(b, e.Data); err != nil {
			return nil, fmt.Errorf("queue: Event.Data of event %s (%s) is not valid JSON", e.ID, e.Kind)
		}
	}
	return append(b, '}'), nil
}

func appendField(b []byte, name, value string) []byte {
	b = append(b, ',', '"')
	b = append(b, name...)
	b = append(b, '"', ':')
	return appendString(b, value)
}

// appendString appends s as a JSON string the way json.Marshal writes it.
// Ids and kinds are plain ASCII and are copied; anything else is left to
// json.Marshal (HTML escapes, invalid UTF-8).
func appendString(b []byte, s string) []byte {
	for i := range len(s) {
		if c := s[i]; c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always encodes
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// appendTime appends t as time.Time's MarshalJSON does.
func appendTime(b []byte, t time.Time) ([]byte, error) {
	if y := t.Year(); y < 0 || y > 9999 {
		q, err := t.MarshalJSON() // its error names the year
		return append(b, q...), err
	}
	b = append(b, '"')
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b, '"'), nil
}

// appendRaw appends the JSON value raw compacted, as json.Marshal writes a
// json.RawMessage: one pass of json.Compact, unless raw holds characters
// json.Marshal would escape (<, >, &, U+2028, U+2029), which it then does.
func appendRaw(b []byte, raw json.RawMessage) ([]byte, error) {
	if needsEscape(raw) {
		q, err := json.Marshal(raw)
		return append(b, q...), err
	}
	buf := bytes.NewBuffer(b)
	if err := json.Compact(buf, raw); err != nil {
		return b, err
	}
	return buf.Bytes(), nil
}

// needsEscape reports whether raw holds a character json.Marshal escapes
// in a json.RawMessage: <, > or & (an ASCII set: one scan), or U+2028 or U+2029
// (substring searches). bytes.ContainsAny with the two non-ASCII
// characters in its set took its slow path, rune by rune: it was a third of
// the cost of encoding an event of 4 KB (BenchmarkEncodeLargeEvent).
func needsEscape(raw []byte) bool {
	return bytes.ContainsAny(raw, "<>&") || bytes.Contains(raw, lineSep) || bytes.Contains(raw, paraSep)
}

var lineSep, paraSep = []byte("\u2028"), []byte("\u2029")
