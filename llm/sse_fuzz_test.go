package llm

import (
	"bytes"
	"io"
	"reflect"
	"testing"
	"testing/iotest"
)

// FuzzSSEReader: any byte stream decodes without a panic into at most one
// event per line, and to the same events whether it arrives whole or one
// byte per read (a network splits it anywhere).
func FuzzSSEReader(f *testing.F) {
	f.Add([]byte("event: message_start\ndata: {\"a\":1}\n\n"))
	f.Add([]byte("data: one\r\ndata: two\r\n\r\n: keep-alive\n\ndata: [DONE]\n\n"))
	f.Add([]byte("event:x\ndata\n\nid: 7\nretry: 10\ndata:  spaced\n\n"))
	f.Add(bytes.Repeat([]byte("data: "+string(bytes.Repeat([]byte("x"), 5000))+"\n"), 20))
	f.Fuzz(func(t *testing.T, body []byte) {
		whole := eventsUntilError(t, bytes.NewReader(body))
		if lines := bytes.Count(body, []byte("\n")) + bytes.Count(body, []byte("\r")) + 1; len(whole) > lines {
			t.Fatalf("%d events from %d lines", len(whole), lines)
		}
		if split := eventsUntilError(t, iotest.OneByteReader(bytes.NewReader(body))); !reflect.DeepEqual(whole, split) {
			t.Fatalf("whole %q\nbyte by byte %q\nbody %q", whole, split, body)
		}
	})
}

// eventsUntilError reads events until the reader's error: io.EOF, or a
// stream that ended mid-event (reported, never an event).
func eventsUntilError(t *testing.T, r io.Reader) []SSEEvent {
	t.Helper()
	s := NewSSEReader(r)
	defer s.Release()
	var events []SSEEvent
	for {
		ev, err := s.Next()
		if err != nil {
			return events
		}
		events = append(events, ev)
	}
}
