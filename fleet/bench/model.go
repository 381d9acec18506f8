package bench

import (
	"bytes"
	"fmt"
	"net/http"
	"time"

	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/llm/sim"
)

// benchModel is the simulated provider of `dispatcher bench`: an Anthropic
// Messages API that waits latency, then answers rounds-1 turns with one
// cheap read-only tool call (glob) and the last with a short text. It reads
// the turn from the conversation, so it needs no state per session.
type benchModel struct {
	latency time.Duration
	rounds  int
	rate    *sim.RateLimit // nil: no limit; else 429s beyond it, like a provider
}

func (m benchModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := sim.ReadBody(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if !bytes.HasPrefix(bytes.TrimSpace(body), []byte("{")) {
		http.Error(w, "bench model: not an Anthropic Messages request (want a JSON object)", http.StatusBadRequest)
		return
	}
	// The rounds so far are the assistant messages. JSON escapes the quotes
	// inside strings, so this text only matches the structure itself, and
	// counting it costs far less than decoding the conversation.
	turn := bytes.Count(body, []byte(`"role":"assistant"`))
	if m.latency > 0 {
		t := time.NewTimer(m.latency)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return
		}
	}
	rep := sim.Reply{Text: "done", Usage: llm.Usage{InputTokens: 100, OutputTokens: 10}}
	if turn < m.rounds-1 {
		rep = sim.Reply{Usage: rep.Usage, ToolCalls: []sim.ToolCallReply{{
			ID: fmt.Sprintf("toolu_bench_%d", turn), Name: "glob", Arguments: `{"pattern":"*.none"}`}}}
	}
	one := sim.New()
	defer one.Close()
	if m.rate != nil {
		one.UseRateLimit(m.rate)
	}
	one.Enqueue(rep)
	one.ServeBody(w, r, body)
}
