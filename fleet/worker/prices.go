package worker

import (
	"github.com/agentfleet/agentfleet/llm/pricing"
)

// newPriceBook is llm/pricing's built-in prices with Config.Prices on
// top; a model it does not know is priced at its profile's
// providers.<profile>.input_per_mtok and output_per_mtok (see priceOf).
// cfg was validated, so the overrides are sound.
func newPriceBook(cfg Config, w *Worker) *pricing.Book {
	b, err := pricing.NewBook(cfg.Prices, w.log)
	if err != nil {
		b, _ = pricing.NewBook(nil, w.log)
	}
	return b
}

// priceOf is the price of model for a task of the profile pc serves.
func (w *Worker) priceOf(model string, pc ProviderConfig) pricing.Price {
	return w.prices.PriceOf(model, pricing.Price{InputPerMTok: pc.InputPerMTok, OutputPerMTok: pc.OutputPerMTok})
}
