package sim

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// StreamWriter writes server-sent events for a dialect and applies the
// reply's delivery settings: delay between events, stall, cut and a
// mid-stream error. A dialect writes its events in order and stops as soon as
// a call returns false. It is used by one handler goroutine.
//
// What was written is flushed to the client whenever the stream pauses
// (before a delay, a stall or a cut) and when the handler ends. A stream
// without pauses therefore leaves in as few writes as the response buffer
// allows rather than one per event: the bytes are the same, and a client
// cannot tell the difference except by fewer reads (the fleet benchmark
// spent a quarter of the simulated model's time in per-event flushes).
type StreamWriter struct {
	w       http.ResponseWriter
	ctx     context.Context // the request's; done when the client goes away
	closing <-chan struct{} // closed when the server shuts down
	rep     Reply
	dialect Dialect
	n       int    // events written
	stopped bool   // the stream ended early (stall, error event)
	buf     []byte // the event being framed, reused
}

func newStreamWriter(w http.ResponseWriter, r *http.Request, closing <-chan struct{}, rep Reply, d Dialect) *StreamWriter {
	h := w.Header()
	h["Content-Type"] = eventStreamType
	h["Cache-Control"] = noCache
	w.WriteHeader(http.StatusOK)
	return &StreamWriter{w: w, ctx: r.Context(), closing: closing, rep: rep, dialect: d, buf: make([]byte, 0, 512)}
}

// The stream's header values, shared by every response: net/http only
// reads them, and Header.Add would append to a copy (their capacity is 1).
var (
	eventStreamType = []string{"text/event-stream; charset=utf-8"}
	noCache         = []string{"no-cache"}
)

// Reply is the reply being streamed.
func (s *StreamWriter) Reply() Reply { return s.rep }

// Chunks splits s into the reply's delta pieces (ChunkSize bytes).
func (s *StreamWriter) Chunks(text string) []string { return chunks(text, s.rep.ChunkSize) }

// Event writes one event with a name ("" for data-only) and data. It returns
// false when the dialect must stop: the stream stalled and the client left,
// or the mid-stream error was sent. A cut closes the connection and does not
// return.
func (s *StreamWriter) Event(event, data string) bool { return sendEvent(s, event, data) }

// eventJSON is Event for data appended by hand (one line of JSON), without
// copying it into a string.
func (s *StreamWriter) eventJSON(event string, data []byte) bool { return sendEvent(s, event, data) }

func sendEvent[T string | []byte](s *StreamWriter, event string, data T) bool {
	if s.stopped {
		return false
	}
	if s.rep.CutAfterChunks > 0 && s.n >= s.rep.CutAfterChunks {
		flush(s.w)                  // the client gets the events before the cut
		panic(http.ErrAbortHandler) // net/http closes the connection without ending the body
	}
	if s.rep.StallAfterChunks > 0 && s.n >= s.rep.StallAfterChunks {
		s.stopped = true
		flush(s.w)
		select {
		case <-s.ctx.Done():
		case <-s.closing:
		}
		return false
	}
	if s.rep.MidStreamError != nil && s.n >= max(s.rep.ErrorAfterChunks, 1) {
		s.stopped = true
		name, body := s.dialect.StreamError(*s.rep.MidStreamError)
		writeEvent(s, name, body)
		return false
	}
	if s.n > 0 && s.rep.ChunkDelay > 0 && !s.wait(s.rep.ChunkDelay) {
		s.stopped = true
		return false
	}
	writeEvent(s, event, data)
	return true
}

// Data writes a data-only event.
func (s *StreamWriter) Data(data string) bool { return s.Event("", data) }

// JSON writes an event whose data is v marshalled.
func (s *StreamWriter) JSON(event string, v any) bool {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("sim: marshalling a %s event: %v", event, err))
	}
	return s.Event(event, string(b))
}

// writeEvent frames one event, a data line for each line of data, and
// writes it, unflushed.
func writeEvent[T string | []byte](s *StreamWriter, event string, data T) {
	b := s.buf[:0]
	if event != "" {
		b = append(b, "event: "...)
		b = append(b, event...)
		b = append(b, '\n')
	}
	for {
		i := 0
		for i < len(data) && data[i] != '\n' {
			i++
		}
		b = append(b, "data: "...)
		b = append(b, data[:i]...)
		b = append(b, '\n')
		if i == len(data) {
			break
		}
		data = data[i+1:]
	}
	b = append(b, '\n')
	_, _ = s.w.Write(b) //nolint:gosec // G705: SSE to a test client, not HTML
	s.buf = b
	s.n++
}

// wait flushes what was written, then sleeps d unless the client leaves or
// the server closes first.
func (s *StreamWriter) wait(d time.Duration) bool {
	flush(s.w)
	return sleep(s.ctx, s.closing, d)
}

func sleep(ctx context.Context, closing <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
	case <-closing:
	}
	return false
}

func flush(w http.ResponseWriter) {
	_ = http.NewResponseController(w).Flush()
}
