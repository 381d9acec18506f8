package llmtest

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/llm/sim/simtest"
)

// Decoder is an adapter's stream decoder: it reads a streamed response body
// and yields its events, ending with a finish event or an error.
type Decoder func(body io.Reader, yield func(llm.StreamEvent, error) bool)

// FuzzDecoder fuzzes decode with arbitrary response bodies, seeded with
// every streamed response recorded in the conformance cassettes whose
// folder names start with one of prefixes (read in place; none found is
// not an error here, the conformance tests report it). Whatever the body,
// the decoder may not panic and must keep the stream contract Collect
// checks: exactly one terminal element, a finish or an error, and nothing
// after it, so that a broken stream is never taken for a complete answer.
func FuzzDecoder(f *testing.F, decode Decoder, prefixes ...string) {
	recorded, _ := simtest.StreamedResponses(prefixes...)
	for _, in := range recorded {
		f.Add([]byte(in.Response.Body))
		f.Add([]byte(in.Response.Body[:len(in.Response.Body)/2])) // cut mid-stream
	}
	f.Add([]byte("data: [DONE]\n\n"))
	f.Add([]byte(": keep-alive\r\n\r\nevent: ping\ndata: {}\n\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		seq := func(yield func(llm.StreamEvent, error) bool) { decode(bytes.NewReader(body), yield) }
		_, _, err := Collect(seq)
		var lerr *llm.Error
		if errors.As(err, &lerr) && strings.HasPrefix(lerr.Message, "llmtest:") {
			t.Fatalf("%s\nbody: %q", lerr.Message, body)
		}
	})
}
