package bench

import (
	"sync"
	"time"

	"github.com/agentfleet/agentfleet/queue"
)

// ContextReport is what a benchmark with a context window measured.
type ContextReport struct {
	Window int `json:"window"`
	// MaxRequestTokens is the largest request the model counted; it must
	// not exceed Window.
	MaxRequestTokens int `json:"max_request_tokens"`
	// Overflows counts requests the model refused as over the window.
	Overflows   int `json:"overflows"`
	Compactions int `json:"compactions"`
	Summaries   int `json:"summaries"`
	// AddedLatency is the time from COMPACTION_START to COMPACTION_END:
	// what each compaction adds to its session (a summary is one model
	// call with the simulated latency).
	AddedLatency Percentiles `json:"added_latency_per_compaction"`
}

// compactions pairs the COMPACTION_START and COMPACTION_END events of
// each session from the event stream.
type compactions struct {
	mu      sync.Mutex
	started map[string]time.Time
	took    []time.Duration
}

func (c *compactions) observe(ev queue.Event) {
	if ev.Kind != "COMPACTION_START" && ev.Kind != "COMPACTION_END" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.started == nil {
		c.started = map[string]time.Time{}
	}
	if ev.Kind == "COMPACTION_START" {
		c.started[ev.SessionID] = ev.Time
		return
	}
	if t, ok := c.started[ev.SessionID]; ok {
		c.took = append(c.took, ev.Time.Sub(t))
		delete(c.started, ev.SessionID)
	}
}

// contextReport gathers the model's counts and the compaction timings.
func (b *benchRun) contextReport() *ContextReport {
	b.ctxs.mu.Lock()
	took := append([]time.Duration(nil), b.ctxs.took...)
	b.ctxs.mu.Unlock()
	r := &ContextReport{Window: b.cfg.ContextWindow, Compactions: len(took), AddedLatency: percentiles(took)}
	if m := b.model; m != nil {
		r.MaxRequestTokens = int(m.maxTokens.Load())
		r.Overflows = int(m.overflows.Load())
		r.Summaries = int(m.summaries.Load())
	}
	return r
}
