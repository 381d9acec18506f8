package execenv

import (
	"fmt"
	"strings"
	"sync"
)

// headTail retains at most max bytes of a stream: the first max/2 bytes and
// the last max-max/2, counting what falls between. It is not safe for
// concurrent use; one reader goroutine owns it.
type headTail struct {
	max     int
	head    []byte
	tail    []byte // ring buffer once full
	tailPos int    // next write position in tail when full
	full    bool   // tail has wrapped at least once
	total   int64
}

func newHeadTail(max int) *headTail { return &headTail{max: max} }

// Write keeps head and tail; it never fails.
func (h *headTail) Write(p []byte) (int, error) {
	n := len(p)
	h.total += int64(n)
	headMax := h.max / 2
	if room := headMax - len(h.head); room > 0 {
		k := min(room, len(p))
		h.head = append(h.head, p[:k]...)
		p = p[k:]
	}
	h.writeTail(p)
	return n, nil
}

// writeTail appends to the tail ring, overwriting its oldest bytes.
func (h *headTail) writeTail(p []byte) {
	tailMax := h.max - h.max/2
	if tailMax == 0 || len(p) == 0 {
		return
	}
	if len(p) >= tailMax {
		h.tail = append(h.tail[:0], p[len(p)-tailMax:]...)
		h.tailPos, h.full = 0, true
		return
	}
	if !h.full {
		if room := tailMax - len(h.tail); room >= len(p) {
			h.tail = append(h.tail, p...)
			return
		}
		// Fill to capacity, then wrap.
		room := tailMax - len(h.tail)
		h.tail = append(h.tail, p[:room]...)
		p = p[room:]
		h.full, h.tailPos = true, 0
	}
	for len(p) > 0 {
		k := copy(h.tail[h.tailPos:], p)
		p = p[k:]
		h.tailPos = (h.tailPos + k) % tailMax
	}
}

// omitted is the number of bytes dropped between head and tail.
func (h *headTail) omitted() int64 {
	return h.total - int64(len(h.head)) - int64(len(h.tail))
}

// String returns head, a marker naming the omitted byte count when
// something was dropped, and tail, as valid UTF-8.
func (h *headTail) String() string {
	var b strings.Builder
	b.Write(h.head)
	if om := h.omitted(); om > 0 {
		fmt.Fprintf(&b, "\n[... %d bytes of output omitted ...]\n", om)
	}
	if h.full {
		b.Write(h.tail[h.tailPos:])
		b.Write(h.tail[:h.tailPos])
	} else {
		b.Write(h.tail)
	}
	return validUTF8(b.String())
}

// validUTF8 replaces invalid byte sequences with U+FFFD.
func validUTF8(s string) string { return strings.ToValidUTF8(s, "\uFFFD") }

// outputSink fans one command's output into the retained buffers and the
// caller's OnOutput callback, serialising callbacks across streams.
type outputSink struct {
	mu       sync.Mutex
	onOutput func(OutputStream, []byte)
}

// stream returns a writer for one stream that retains into buf.
func (s *outputSink) stream(which OutputStream, buf *headTail) *streamWriter {
	return &streamWriter{sink: s, which: which, buf: buf}
}

// streamWriter is the io.Writer of one stream. Only its reader goroutine
// writes to buf; String is called after that goroutine is done.
type streamWriter struct {
	sink  *outputSink
	which OutputStream
	buf   *headTail
}

// Write retains p and passes it to OnOutput.
func (w *streamWriter) Write(p []byte) (int, error) {
	_, _ = w.buf.Write(p)
	if w.sink.onOutput != nil {
		chunk := append([]byte(nil), p...) // the callback may keep it
		w.sink.mu.Lock()
		w.sink.onOutput(w.which, chunk)
		w.sink.mu.Unlock()
	}
	return len(p), nil
}
