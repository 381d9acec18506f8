package fleet

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/llm/llmtest"
)

// benchModel is the simulated provider of `dispatcher bench`: an Anthropic
// Messages API that waits latency, then answers rounds-1 turns with one
// cheap read-only tool call (glob) and the last with a short text. It reads
// the turn from the conversation, so it needs no state per session.
type benchModel struct {
	latency time.Duration
	rounds  int
}

func (m benchModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var req struct {
		Messages []struct {
			Role string `json:"role"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, "bench model: not an Anthropic Messages request: "+err.Error(), http.StatusBadRequest)
		return
	}
	turn := 0
	for _, msg := range req.Messages {
		if msg.Role == "assistant" {
			turn++
		}
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
	rep := llmtest.Reply{Text: "done", Usage: llm.Usage{InputTokens: 100, OutputTokens: 10}}
	if turn < m.rounds-1 {
		rep = llmtest.Reply{Usage: rep.Usage, ToolCalls: []llmtest.ToolCallReply{{
			ID: fmt.Sprintf("toolu_bench_%d", turn), Name: "glob", Arguments: `{"pattern":"*.none"}`}}}
	}
	one := llmtest.New()
	defer one.Close()
	one.Enqueue(rep)
	r.Body = io.NopCloser(bytes.NewReader(body))
	one.ServeHTTP(w, r)
}
