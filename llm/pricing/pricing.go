package pricing

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/agentfleet/agentfleet/llm"
)

// Price is what a million tokens of each kind cost, in USD.
type Price struct {
	InputPerMTok      float64 `json:"input_per_mtok" mapstructure:"input_per_mtok"`
	OutputPerMTok     float64 `json:"output_per_mtok" mapstructure:"output_per_mtok"`
	CacheReadPerMTok  float64 `json:"cache_read_per_mtok" mapstructure:"cache_read_per_mtok"`
	CacheWritePerMTok float64 `json:"cache_write_per_mtok" mapstructure:"cache_write_per_mtok"`
}

// Cost is the price of one call's usage (see the package doc).
func (p Price) Cost(u llm.Usage) float64 {
	fresh := max(u.InputTokens-u.CacheReadTokens-u.CacheWriteTokens, 0)
	return (float64(fresh)*p.InputPerMTok +
		float64(u.CacheReadTokens)*p.CacheReadPerMTok +
		float64(u.CacheWriteTokens)*p.CacheWritePerMTok +
		float64(u.OutputTokens)*p.OutputPerMTok) / 1e6
}

// Validate reports a negative or non-finite price, naming it under field
// (e.g. "prices.claude-sonnet-4-5").
func (p Price) Validate(field string) error {
	for _, f := range []struct {
		name string
		v    float64
	}{
		{"input_per_mtok", p.InputPerMTok}, {"output_per_mtok", p.OutputPerMTok},
		{"cache_read_per_mtok", p.CacheReadPerMTok}, {"cache_write_per_mtok", p.CacheWritePerMTok},
	} {
		if f.v < 0 || math.IsNaN(f.v) || math.IsInf(f.v, 0) {
			return fmt.Errorf("%s.%s must be a number >= 0 (USD per million tokens), got %v", field, f.name, f.v)
		}
	}
	return nil
}

// Table maps model names (or name prefixes, see Lookup) to prices.
type Table map[string]Price

// Lookup returns the price of model: its exact entry, else the entry of
// the provider's own id when model is a cloud's spelling of it (Bedrock,
// Vertex AI; see the package doc), else the longest key that name starts
// with followed by '-'. ok is false when none matches: the model is
// unpriced, which is not the same as free (see Known).
func (t Table) Lookup(model string) (p Price, ok bool) {
	return lookup(t, model)
}

// Known reports whether t prices model (see Lookup). A model it does not
// know is unpriced: what it costs is unknown, which is not the same as a
// price of $0 (a known model may be priced at zero).
func (t Table) Known(model string) bool {
	_, ok := t.Lookup(model)
	return ok
}

// Unpriced returns the models t does not price, once each, in the order
// given; nil when every one is priced.
func (t Table) Unpriced(models ...string) []string {
	var out []string
	for _, m := range models {
		if !t.Known(m) && !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	return out
}

// UnpricedError says which models have no price, for a caller that must
// refuse work whose cost it cannot count (a cost limit, a budget).
type UnpricedError struct {
	Models []string
}

func (e *UnpricedError) Error() string {
	return fmt.Sprintf("no price is known for model %s, so its cost cannot be counted against a cost limit or budget: "+
		"set prices.<model> (input_per_mtok, output_per_mtok) in the worker configuration, or choose a priced model",
		strings.Join(e.Models, ", "))
}

// Override returns the built-in table with overrides applied on top, after
// validating them. In an override, a zero cache-read or cache-write price
// means the input price (no cache discount known), so an operator who
// gives only input and output is never billed zero for cached tokens.
func Override(base Table, overrides map[string]Price) (Table, error) {
	out := make(Table, len(base)+len(overrides))
	maps.Copy(out, base)
	names := make([]string, 0, len(overrides))
	for k := range overrides {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, model := range names {
		p := overrides[model]
		if model == "" {
			return nil, fmt.Errorf("prices has an empty model name")
		}
		if err := p.Validate("prices." + model); err != nil {
			return nil, err
		}
		if p.CacheReadPerMTok == 0 {
			p.CacheReadPerMTok = p.InputPerMTok
		}
		if p.CacheWritePerMTok == 0 {
			p.CacheWritePerMTok = p.InputPerMTok
		}
		out[model] = p
	}
	return out, nil
}
