package execenv

import (
	"testing"
)

func TestHeadTail(t *testing.T) {
	h := newHeadTail(10)
	for _, chunk := range []string{"01234", "56789", "abcdefghij", "KLMNOPQRSTUV"} {
		_, _ = h.Write([]byte(chunk))
	}
	if got := h.String(); got != "01234\n[... 22 bytes of output omitted ...]\nRSTUV" {
		t.Fatalf("String = %q", got)
	}
	if h.omitted() != 22 {
		t.Fatalf("omitted = %d", h.omitted())
	}
	small := newHeadTail(100)
	_, _ = small.Write([]byte("short \xff"))
	if got := small.String(); got != "short \uFFFD" || small.omitted() != 0 {
		t.Fatalf("small = %q, omitted %d", got, small.omitted())
	}
	// Many small writes wrap the ring correctly.
	ring := newHeadTail(6)
	for _, c := range "abcdefghijklmnop" {
		_, _ = ring.Write([]byte(string(c)))
	}
	if got := ring.String(); got != "abc\n[... 10 bytes of output omitted ...]\nnop" {
		t.Fatalf("ring = %q", got)
	}
}
