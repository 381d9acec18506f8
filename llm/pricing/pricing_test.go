package pricing

import (
	"math"
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/llm"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-12 }

// TestCostArithmetic: fresh input, cache reads, cache writes and output
// each at their own price; reasoning is part of output and not charged
// twice.
func TestCostArithmetic(t *testing.T) {
	p := Price{InputPerMTok: 3, OutputPerMTok: 15, CacheReadPerMTok: 0.30, CacheWritePerMTok: 3.75}
	for _, c := range []struct {
		name string
		u    llm.Usage
		want float64
	}{
		{"fresh only", llm.Usage{InputTokens: 1_000_000}, 3},
		{"output with reasoning", llm.Usage{OutputTokens: 2_000_000, ReasoningTokens: 500_000}, 30},
		{"all read", llm.Usage{InputTokens: 1_000_000, CacheReadTokens: 1_000_000}, 0.30},
		{"mixed", llm.Usage{InputTokens: 10_000, CacheReadTokens: 8_000, CacheWriteTokens: 1_500, OutputTokens: 200},
			(500*3 + 8_000*0.30 + 1_500*3.75 + 200*15) / 1e6},
		{"counts that do not add up", llm.Usage{InputTokens: 10, CacheReadTokens: 20}, 20 * 0.30 / 1e6},
		{"nothing", llm.Usage{}, 0},
	} {
		if got := p.Cost(c.u); !near(got, c.want) {
			t.Errorf("%s: cost %v, want %v", c.name, got, c.want)
		}
	}
}

// TestCachingCheaper: the same prompt read from the cache costs a tenth of
// the fresh input at the built-in Anthropic prices.
func TestCachingCheaper(t *testing.T) {
	p, ok := Builtin().Lookup("claude-sonnet-4-5")
	if !ok {
		t.Fatal("claude-sonnet-4-5 has no built-in price")
	}
	fresh := p.Cost(llm.Usage{InputTokens: 100_000})
	cached := p.Cost(llm.Usage{InputTokens: 100_000, CacheReadTokens: 100_000})
	if !near(cached*10, fresh) {
		t.Fatalf("cached %v, fresh %v: want a tenth", cached, fresh)
	}
}

func TestLookup(t *testing.T) {
	tab := Builtin()
	for model, want := range map[string]string{
		"claude-sonnet-4-5":          "claude-sonnet-4-5",
		"claude-sonnet-4-5-20250929": "claude-sonnet-4-5",
		"claude-sonnet-4-20250514":   "claude-sonnet-4",
		"gpt-5-mini-2025-08-07":      "gpt-5-mini",
		"gpt-5":                      "gpt-5",
		"gemini-2.5-flash-lite":      "gemini-2.5-flash-lite",
	} {
		got, ok := tab.Lookup(model)
		if !ok || got != tab[want] {
			t.Errorf("Lookup(%q) = %+v, %v; want the price of %s", model, got, ok, want)
		}
	}
	if _, ok := tab.Lookup("llama3"); ok {
		t.Error("an unknown model has a price")
	}
	if _, ok := tab.Lookup("gpt-50"); ok {
		t.Error("gpt-50 matched gpt-5: a prefix must end at a '-'")
	}
}

// TestOverride: an override replaces or adds a model, fills missing cache
// prices with the input price, and a negative price names its field.
func TestOverride(t *testing.T) {
	tab, err := Override(Builtin(), map[string]Price{
		"gpt-5":  {InputPerMTok: 1, OutputPerMTok: 2},
		"local7": {InputPerMTok: 0.5, OutputPerMTok: 1, CacheReadPerMTok: 0.05},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := tab["gpt-5"]; got != (Price{InputPerMTok: 1, OutputPerMTok: 2, CacheReadPerMTok: 1, CacheWritePerMTok: 1}) {
		t.Errorf("gpt-5 override = %+v", got)
	}
	if got := tab["local7"]; got.CacheReadPerMTok != 0.05 || got.CacheWritePerMTok != 0.5 {
		t.Errorf("local7 override = %+v", got)
	}
	if Builtin()["gpt-5"].InputPerMTok != 1.25 {
		t.Error("Override changed the built-in table")
	}
	for _, bad := range []Price{{InputPerMTok: -1}, {OutputPerMTok: math.NaN()}, {CacheWritePerMTok: math.Inf(1)}} {
		_, err := Override(Builtin(), map[string]Price{"m": bad})
		if err == nil || !strings.Contains(err.Error(), "prices.m.") || !strings.Contains(err.Error(), ">= 0") {
			t.Errorf("Override(%+v) = %v, want an error naming the field", bad, err)
		}
	}
}

// TestBook: a known model has its table price; an unknown one the
// fallback, its missing cache prices at the input price.
func TestBook(t *testing.T) {
	b, err := NewBook(map[string]Price{"mine": {InputPerMTok: 2, OutputPerMTok: 4}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := b.PriceOf("claude-sonnet-4-5-20250929", Price{}); got != Builtin()["claude-sonnet-4-5"] {
		t.Errorf("known model priced %+v", got)
	}
	if got := b.PriceOf("mine", Price{}); got.CacheReadPerMTok != 2 || got.OutputPerMTok != 4 {
		t.Errorf("override priced %+v", got)
	}
	if got := b.PriceOf("unknown", Price{InputPerMTok: 1, OutputPerMTok: 3}); got != (Price{InputPerMTok: 1, OutputPerMTok: 3, CacheReadPerMTok: 1, CacheWritePerMTok: 1}) {
		t.Errorf("unknown model priced %+v", got)
	}
	if _, err := NewBook(map[string]Price{"bad": {InputPerMTok: -1}}, nil); err == nil {
		t.Error("a negative override was accepted")
	}
}
