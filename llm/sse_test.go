package llm

import (
	"errors"
	"io"
	"strings"
	"testing"
)

func readAllEvents(t *testing.T, r io.Reader) []SSEEvent {
	t.Helper()
	sr := NewSSEReader(r)
	var out []SSEEvent
	for {
		ev, err := sr.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		out = append(out, ev)
	}
}

func TestSSEReader(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []SSEEvent
	}{
		{"lf", "event: a\ndata: 1\n\nevent: b\ndata: 2\n\n", []SSEEvent{{Event: "a", Data: "1"}, {Event: "b", Data: "2"}}},
		{"crlf", "event: a\r\ndata: 1\r\n\r\ndata: 2\r\n\r\n", []SSEEvent{{Event: "a", Data: "1"}, {Data: "2"}}},
		{"multi-line data", "data: one\ndata: two\ndata:three\n\n", []SSEEvent{{Data: "one\ntwo\nthree"}}},
		{"comments and blank lines", ": keep-alive\n\n\n: ping\ndata: x\n\n", []SSEEvent{{Data: "x"}}},
		{"id persists", "id: 7\ndata: a\n\ndata: b\n\n", []SSEEvent{{Data: "a", ID: "7"}, {Data: "b", ID: "7"}}},
		{"done", "data: {\"a\":1}\n\ndata: [DONE]\n\n", []SSEEvent{{Data: `{"a":1}`}, {Data: "[DONE]"}}},
		{"no space after colon", "event:x\ndata:y\n\n", []SSEEvent{{Event: "x", Data: "y"}}},
		{"unterminated last event", "data: a\n\ndata: b", []SSEEvent{{Data: "a"}, {Data: "b"}}},
		{"unknown fields ignored", "retry: 10\nfoo\ndata: a\n\n", []SSEEvent{{Data: "a"}}},
		{"empty", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := readAllEvents(t, strings.NewReader(tt.in))
			if len(got) != len(tt.want) {
				t.Fatalf("got %d events %+v, want %+v", len(got), got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("event %d = %+v, want %+v", i, got[i], tt.want[i])
				}
			}
		})
	}
}

// TestSSEReaderLongLine reads a 17 MiB data line, past any scanner limit,
// delivered in small reads.
func TestSSEReaderLongLine(t *testing.T) {
	long := strings.Repeat("x", 17<<20)
	in := "data: " + long + "\r\n\r\ndata: after\n\n"
	got := readAllEvents(t, io.MultiReader(strings.NewReader(in[:1000]), strings.NewReader(in[1000:])))
	if len(got) != 2 || len(got[0].Data) != len(long) || got[1].Data != "after" {
		t.Fatalf("got %d events, first data %d bytes; want 2 events, %d bytes", len(got), len(got[0].Data), len(long))
	}
}

type failingReader struct{ err error }

func (f failingReader) Read([]byte) (int, error) { return 0, f.err }

func TestSSEReaderPassesReadErrors(t *testing.T) {
	boom := errors.New("boom")
	sr := NewSSEReader(io.MultiReader(strings.NewReader("data: a\n\ndata: par"), failingReader{boom}))
	if ev, err := sr.Next(); err != nil || ev.Data != "a" {
		t.Fatalf("first = %+v, %v", ev, err)
	}
	if _, err := sr.Next(); !errors.Is(err, boom) {
		t.Fatalf("second err = %v, want boom", err)
	}
	if _, err := sr.Next(); !errors.Is(err, boom) {
		t.Fatalf("after failure err = %v, want boom again", err)
	}
}

func BenchmarkSSEReader(b *testing.B) {
	var sb strings.Builder
	for range 1000 {
		sb.WriteString("event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"delta\":\"hello world\"}\n\n")
	}
	in := sb.String()
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		sr := NewSSEReader(strings.NewReader(in))
		for {
			if _, err := sr.Next(); err != nil {
				break
			}
		}
	}
}

// TestSSEReaderRelease: a released reader reports an error instead of
// reading, and its buffer serves the next reader from a clean state.
func TestSSEReaderRelease(t *testing.T) {
	r := NewSSEReader(strings.NewReader("event: a\ndata: 1\n\nevent: b\ndata: 2\n\n"))
	if ev, err := r.Next(); err != nil || ev.Data != "1" {
		t.Fatalf("first event %+v, %v", ev, err)
	}
	r.Release()
	r.Release() // twice is harmless
	if _, err := r.Next(); !errors.Is(err, errReleased) {
		t.Fatalf("Next after Release: %v, want errReleased", err)
	}
	next := NewSSEReader(strings.NewReader("data: fresh\n\n"))
	if ev, err := next.Next(); err != nil || ev.Data != "fresh" || ev.Event != "" {
		t.Fatalf("reader after a release read %+v, %v; want only the data fresh", ev, err)
	}
}
