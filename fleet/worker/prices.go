package worker

import (
	"log/slog"
	"sync"

	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/llm/pricing"
)

// priceBook is the worker's price table: llm/pricing's built-in prices
// with Config.Prices on top. A model the table does not know is priced at
// its profile's providers.<profile>.input_per_mtok and output_per_mtok
// (cache tokens as input), and logged once.
type priceBook struct {
	table pricing.Table
	log   *slog.Logger

	mu      sync.Mutex
	unknown map[string]bool
}

// newPriceBook builds the table; cfg was validated, so Override cannot fail.
func newPriceBook(cfg Config, log *slog.Logger) *priceBook {
	t, err := pricing.Override(pricing.Builtin(), cfg.Prices)
	if err != nil {
		t = pricing.Builtin()
	}
	return &priceBook{table: t, log: log, unknown: map[string]bool{}}
}

// priceOf returns the price of model for a task of the profile pc serves.
func (b *priceBook) priceOf(model string, pc ProviderConfig) pricing.Price {
	if p, ok := b.table.Lookup(model); ok {
		return p
	}
	b.mu.Lock()
	first := !b.unknown[model]
	b.unknown[model] = true
	b.mu.Unlock()
	if first && b.log != nil && pc.InputPerMTok == 0 && pc.OutputPerMTok == 0 {
		b.log.Warn("no price for this model: its tokens cost 0; set prices.<model> in the worker configuration", "model", model)
	}
	return pricing.Price{InputPerMTok: pc.InputPerMTok, OutputPerMTok: pc.OutputPerMTok,
		CacheReadPerMTok: pc.InputPerMTok, CacheWritePerMTok: pc.InputPerMTok}
}

// turnUsage is what the store keeps as a turn's usage: the model call's
// tokens and what they cost (GET /v1/sessions/{id}/turns shows it).
type turnUsage struct {
	llm.Usage
	CostUSD float64 `json:"cost_usd"`
}
