package forge

import (
	"bytes"
	"io"
	"testing"
	"testing/iotest"
)

// readTail returns a body's last n bytes whatever its size and however
// the reader splits it (forge_test's TestALongLogIsReadInBoundedMemory
// checks what it holds).
func TestReadTailKeepsTheEnd(t *testing.T) {
	const n = 1000
	body := make([]byte, 10*n+123)
	for i := range body {
		body[i] = byte('a' + i%26)
	}
	for _, size := range []int{0, 1, n - 1, n, n + 1, 2 * n, 2*n + 1, len(body)} {
		for name, r := range map[string]io.Reader{
			"whole":    bytes.NewReader(body[:size]),
			"one byte": iotest.OneByteReader(bytes.NewReader(body[:size])),
			"data+EOF": iotest.DataErrReader(bytes.NewReader(body[:size])),
		} {
			got, err := readTail(r, n)
			if err != nil {
				t.Fatalf("%d bytes, %s: %v", size, name, err)
			}
			if want := body[max(0, size-n):size]; !bytes.Equal(got, want) {
				t.Fatalf("%d bytes, %s: got %d bytes, want the last %d", size, name, len(got), len(want))
			}
		}
	}
	if _, err := readTail(iotest.TimeoutReader(bytes.NewReader(body)), n); err == nil {
		t.Fatal("a reader's error was not returned")
	}
}
