package bench

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/agentfleet/agentfleet/agent/compact"
	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/llm/sim"
)

// benchModel is the simulated provider of `agentfleet-dev bench`: an Anthropic
// Messages API that waits latency, then answers rounds-1 turns with one
// cheap read-only tool call (glob), or a shell command printing
// outputBytes bytes, and the last with a short text. It reads the turn
// from the conversation (the highest tool call id in it, which a
// compacted conversation keeps), so it needs no state per session. With a
// window it counts every request, refuses one over the window with
// Anthropic's error, and answers summary requests with short notes.
type benchModel struct {
	latency     time.Duration
	rounds      int
	window      int
	outputBytes int
	// tokens, when > 0, makes the answer that many 5-byte tokens streamed
	// one per delta, tokenInterval apart (Config.StreamTokens).
	tokens        int
	tokenInterval time.Duration

	maxTokens atomic.Int64   // largest request counted
	overflows atomic.Int64   // requests refused as over the window
	summaries atomic.Int64   // summary requests answered
	rate      *sim.RateLimit // nil: no limit; else 429s beyond it, like a provider
}

func (m *benchModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := sim.ReadBody(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if !bytes.HasPrefix(bytes.TrimSpace(body), []byte("{")) {
		http.Error(w, "bench model: not an Anthropic Messages request (want a JSON object)", http.StatusBadRequest)
		return
	}
	if m.latency > 0 {
		t := time.NewTimer(m.latency)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return
		}
	}
	one := sim.New()
	defer one.Close()
	if m.rate != nil {
		one.UseRateLimit(m.rate)
	}
	one.Enqueue(m.reply(body))
	if m.window > 0 {
		tokens := sim.CountTokens(body)
		for cur := m.maxTokens.Load(); int64(tokens) > cur && !m.maxTokens.CompareAndSwap(cur, int64(tokens)); cur = m.maxTokens.Load() {
		}
		if tokens > m.window {
			m.overflows.Add(1)
		}
		one.SetContextWindow("", m.window)
	}
	one.ServeBody(w, r, body)
}

// reply is the answer to a request body.
func (m *benchModel) reply(body []byte) sim.Reply {
	usage := llm.Usage{InputTokens: 100, OutputTokens: 10}
	if m.window > 0 {
		usage.InputTokens = 0 // the sim server reports its count
	}
	if bytes.Contains(body, []byte(compact.SummaryMarker)) {
		m.summaries.Add(1)
		return sim.Reply{Text: "Task: the bench task. Current state: working through its rounds. Next steps: the next round.", Usage: usage}
	}
	turn := benchTurn(body)
	if bytes.Contains(body, []byte(stallMarker)) {
		return stallReply(turn, usage)
	}
	if turn >= m.rounds-1 {
		rep := sim.Reply{Text: "done", Usage: usage}
		if m.tokens > 0 {
			rep.Text, rep.ChunkSize, rep.ChunkDelay = streamedAnswer(m.tokens), streamTokenBytes, m.tokenInterval
		}
		return rep
	}
	// A new pattern each round: a repeated call would be a stall, which the
	// progress watchdog stops (agent/watchdog.go).
	call := sim.ToolCallReply{ID: fmt.Sprintf("toolu_bench_%d", turn), Name: "glob", Arguments: fmt.Sprintf(`{"pattern":"*.none%d"}`, turn)}
	if m.outputBytes > 0 {
		call.Name, call.Arguments = "shell", fmt.Sprintf(`{"command":"printf '%%0*d' %d %d"}`, m.outputBytes, turn)
	}
	return sim.Reply{Usage: usage, ToolCalls: []sim.ToolCallReply{call}}
}

// benchTurn is the number of rounds a conversation has made: one more than
// the highest toolu_bench_ id in it (0 when it has none). JSON escapes the
// quotes inside strings, so scanning the raw body costs far less than
// decoding the conversation.
func benchTurn(body []byte) int {
	const prefix = "toolu_bench_"
	turn := 0
	for rest := body; ; {
		i := bytes.Index(rest, []byte(prefix))
		if i < 0 {
			return turn
		}
		rest = rest[i+len(prefix):]
		n := 0
		j := 0
		for ; j < len(rest) && rest[j] >= '0' && rest[j] <= '9'; j++ {
			n = n*10 + int(rest[j]-'0')
		}
		if j > 0 {
			turn = max(turn, n+1)
		}
	}
}

// streamTokenBytes is the size of one streamed token of the bench model.
const streamTokenBytes = 5

// streamedAnswer is n tokens of streamTokenBytes bytes each ("t0001 ").
func streamedAnswer(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "t%03d ", i%1000)
	}
	return b.String()
}
