package pricing

import (
	"log/slog"
	"sync"
)

// Book is a price table for a process that prices calls as they come: the
// built-in table with overrides, and for a model it does not know a
// fallback price, with a warning logged once per model when that price is
// zero. Safe for concurrent use.
type Book struct {
	table Table
	log   *slog.Logger

	mu      sync.Mutex
	unknown map[string]bool
}

// NewBook returns the built-in table with overrides on top (validated:
// see Override); log may be nil.
func NewBook(overrides map[string]Price, log *slog.Logger) (*Book, error) {
	t, err := Override(Builtin(), overrides)
	if err != nil {
		return nil, err
	}
	return &Book{table: t, log: log, unknown: map[string]bool{}}, nil
}

// PriceOf returns model's price, else fallback (whose zero cache prices
// mean the input price: no discount is known).
func (b *Book) PriceOf(model string, fallback Price) Price {
	if p, ok := b.table.Lookup(model); ok {
		return p
	}
	b.mu.Lock()
	first := !b.unknown[model]
	b.unknown[model] = true
	b.mu.Unlock()
	if first && b.log != nil && fallback == (Price{}) {
		b.log.Warn("no price for this model: its tokens cost 0; set prices.<model> in the worker configuration", "model", model)
	}
	if fallback.CacheReadPerMTok == 0 {
		fallback.CacheReadPerMTok = fallback.InputPerMTok
	}
	if fallback.CacheWritePerMTok == 0 {
		fallback.CacheWritePerMTok = fallback.InputPerMTok
	}
	return fallback
}

// Known reports whether the book prices model: the built-in table or an
// override (see Table.Known). PriceOf's fallback does not count.
func (b *Book) Known(model string) bool { return b.table.Known(model) }

// Unpriced returns the models the book does not price (see Table.Unpriced).
func (b *Book) Unpriced(models ...string) []string { return b.table.Unpriced(models...) }

// RequirePriced returns an *UnpricedError naming the models the book does
// not price, or nil when it prices them all: what a caller checks before
// it accepts work whose cost must be counted.
func (b *Book) RequirePriced(models ...string) error {
	if missing := b.Unpriced(models...); len(missing) > 0 {
		return &UnpricedError{Models: missing}
	}
	return nil
}
