package llmtest

import (
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/internal/testenv"
	"github.com/agentfleet/agentfleet/llm/sim/simtest"

	"github.com/agentfleet/agentfleet/llm"
)

// BenchmarkStreamDecode measures an adapter's stream decoder on the largest
// recorded streamed response among the cassette folders whose names start
// with one of prefixes: SSE framing, event JSON, assembly and the final
// response, reported in bytes per second and allocations. decode must end
// every stream with EventFinish; an error fails the benchmark. Without the
// recordings it skips, or fails when AGENTFLEET_REQUIRE_INTEGRATION=1.
func BenchmarkStreamDecode(b *testing.B, decode func(io.Reader, func(llm.StreamEvent, error) bool), prefixes ...string) {
	in, err := simtest.LargestStreamedResponse(prefixes...)
	if err != nil {
		testenv.SkipOrFatal(b, fmt.Sprintf("no streamed cassette under %v: %v", prefixes, err))
	}
	body := in.Response.Body
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		var final *llm.Response
		decode(strings.NewReader(body), func(ev llm.StreamEvent, err error) bool {
			if err != nil {
				b.Fatal(err)
			}
			if ev.Kind == llm.EventFinish {
				final = ev.Response
			}
			return true
		})
		if final == nil {
			b.Fatal("the stream ended without a finish event")
		}
	}
}
