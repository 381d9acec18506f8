package llm

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"
	"sync"
)

// SSEEvent is one server-sent event. Event is empty when the server sent no
// event line (the SSE default type "message"). Data joins multiple data lines
// with "\n". A terminating "data: [DONE]" arrives as an event whose Data is
// "[DONE]"; callers check for it.
type SSEEvent struct {
	Event string
	Data  string
	ID    string
}

// SSEReader decodes a text/event-stream. It accepts LF and CRLF line endings
// and lines of any length (bounded only by memory, not by a scanner limit).
// Comment lines (keep-alives) are skipped. It is not safe for concurrent use.
type SSEReader struct {
	r      *bufio.Reader
	line   []byte // reused buffer for lines longer than the bufio buffer
	data   strings.Builder
	lastID string
	// lastEvent is the last event name read, reused when it repeats.
	lastEvent string
	err       error
}

// sseBufferSize is the initial read buffer; longer lines grow a separate
// buffer instead of failing as bufio.Scanner would past 64 KiB.
const sseBufferSize = 4 << 10

// sseBuffers holds the read buffers of released readers.
var sseBuffers = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, sseBufferSize) }}

// errReleased is what Next returns after Release.
var errReleased = errors.New("llm: SSEReader used after Release")

// NewSSEReader returns a reader of the events in r.
func NewSSEReader(r io.Reader) *SSEReader {
	br := sseBuffers.Get().(*bufio.Reader)
	br.Reset(r)
	return &SSEReader{r: br}
}

// Release hands the reader's buffer to the next NewSSEReader. Calling it is
// optional, once the stream is done; Next then returns an error.
func (s *SSEReader) Release() {
	if s.r == nil {
		return
	}
	s.r.Reset(nil)
	sseBuffers.Put(s.r)
	s.r, s.err = nil, errReleased
}

// Next returns the next event. It returns io.EOF after the last event; an
// event not terminated by a blank line at end of input is still delivered if
// it carried data. Other errors are those of the underlying reader.
func (s *SSEReader) Next() (SSEEvent, error) {
	if s.err != nil {
		return SSEEvent{}, s.err
	}
	var ev SSEEvent
	hasData := false
	s.data.Reset()
	for {
		line, err := s.readLine()
		if err != nil && (len(line) == 0 || !errors.Is(err, io.EOF)) {
			s.err = err
			if errors.Is(err, io.EOF) && (hasData || ev.Event != "") {
				return s.finish(ev, hasData), nil
			}
			return SSEEvent{}, err
		}
		if len(line) == 0 {
			if hasData || ev.Event != "" {
				return s.finish(ev, hasData), nil
			}
			continue // blank line with nothing pending: skip
		}
		if line[0] == ':' {
			continue // comment, used as keep-alive
		}
		field, value := splitField(line)
		switch string(field) { // compared without a copy
		case "event":
			ev.Event = s.eventName(value)
		case "data":
			if hasData {
				s.data.WriteByte('\n')
			}
			s.data.Write(value)
			hasData = true
		case "id":
			if bytes.IndexByte(value, 0) < 0 {
				s.lastID = string(value)
			}
		}
		if err != nil { // EOF after a final unterminated line
			s.err = err
			if hasData || ev.Event != "" {
				return s.finish(ev, hasData), nil
			}
			return SSEEvent{}, err
		}
	}
}

func (s *SSEReader) finish(ev SSEEvent, hasData bool) SSEEvent {
	if hasData {
		ev.Data = s.data.String()
	}
	ev.ID = s.lastID
	return ev
}

// eventName returns value as a string, the previous event's name when it
// is the same: a stream repeats a few names (every delta), so most events
// need no copy.
func (s *SSEReader) eventName(value []byte) string {
	if string(value) != s.lastEvent {
		s.lastEvent = string(value)
	}
	return s.lastEvent
}

// splitField splits "field: value" per the SSE rules: one optional space
// after the colon is dropped; a line without a colon is a field with an empty
// value.
func splitField(line []byte) ([]byte, []byte) {
	before, after, ok := bytes.Cut(line, []byte{':'})
	if !ok {
		return line, nil
	}
	value := after
	if len(value) > 0 && value[0] == ' ' {
		value = value[1:]
	}
	return before, value
}

// readLine returns the next line without its terminator. The returned slice
// is valid until the next call.
func (s *SSEReader) readLine() ([]byte, error) {
	chunk, err := s.r.ReadSlice('\n')
	if err == nil || errors.Is(err, io.EOF) && len(chunk) > 0 {
		return trimEOL(chunk), err
	}
	if !errors.Is(err, bufio.ErrBufferFull) {
		return nil, err
	}
	s.line = append(s.line[:0], chunk...)
	for {
		chunk, err = s.r.ReadSlice('\n')
		s.line = append(s.line, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, err
		}
		return trimEOL(s.line), err
	}
}

// trimEOL drops a trailing "\n" or "\r\n".
func trimEOL(b []byte) []byte {
	b = bytes.TrimSuffix(b, []byte("\n"))
	return bytes.TrimSuffix(b, []byte("\r"))
}
