package pricing_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/llm/anthropic"
	"github.com/agentfleet/agentfleet/llm/gemini"
	"github.com/agentfleet/agentfleet/llm/openai"
	"github.com/agentfleet/agentfleet/llm/pricing"
	"github.com/agentfleet/agentfleet/llm/sim"
	"github.com/agentfleet/agentfleet/profiles"
)

// sessionFigures is what a simulated session used and cost.
type sessionFigures struct {
	usage llm.Usage
	cost  float64
}

func (f sessionFigures) hitRate() float64 {
	return float64(f.usage.CacheReadTokens) / float64(max(f.usage.InputTokens, 1))
}

// runSession plays a coding session of the given rounds through client
// against srv: the Anthropic profile's real system prompt and tools, a
// shell call every round answered with about 2 KB of output, the usage as
// the simulated provider's prompt cache reports it.
func runSession(t *testing.T, srv *sim.Server, client llm.Client, model string, rounds int, opts llm.ProviderOptions) sessionFigures {
	t.Helper()
	system, err := os.ReadFile("../../profiles/testdata/anthropic.golden")
	if err != nil {
		t.Fatal(err)
	}
	prof, err := profiles.ForProvider("anthropic", model)
	if err != nil {
		t.Fatal(err)
	}
	price, _ := pricing.Builtin().Lookup(model)
	req := llm.Request{Model: model, Tools: prof.Tools(), ProviderOptions: opts, CacheKey: "session-1",
		Messages: []llm.Message{llm.SystemMessage(string(system)), llm.UserMessage("The tests in ./cart fail; fix them.")}}
	var f sessionFigures
	for round := range rounds {
		id := fmt.Sprintf("call_%d", round)
		srv.Enqueue(sim.Reply{ToolCalls: []sim.ToolCallReply{{ID: id, Name: "bash", Arguments: `{"command":"go test ./cart"}`}},
			Usage: llm.Usage{OutputTokens: 60}})
		resp, err := client.Complete(context.Background(), req)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		f.usage = f.usage.Add(resp.Usage)
		f.cost += price.Cost(resp.Usage)
		out := strings.Repeat(fmt.Sprintf("round %d: --- FAIL: TestTotal (0.00s) cart_test.go:12: got 90, want 100\n", round), 28)
		req.Messages = append(req.Messages, resp.Message,
			llm.ToolResultMessage(llm.ToolResult{ToolCallID: id, Name: "bash", Content: out}))
	}
	return f
}

// TestAnthropicSessionCacheHits: over 20 rounds the cache marks let the
// provider read at least 80 % of the input from its cache, and the session
// costs less than without them. The figures are logged (go test -v) for
// the benchmark.
func TestAnthropicSessionCacheHits(t *testing.T) {
	const model, rounds = "claude-sonnet-4-5", 20
	figures := map[bool]sessionFigures{}
	for _, cache := range []bool{true, false} {
		srv := sim.NewServer()
		srv.EnablePromptCache(1024)
		client, err := anthropic.New(anthropic.Config{BaseURL: srv.URL(), APIKey: "k"})
		if err != nil {
			t.Fatal(err)
		}
		figures[cache] = runSession(t, srv, client, model, rounds, llm.ProviderOptions{"anthropic": {"prompt_cache": cache}})
		srv.Close()
	}
	on, off := figures[true], figures[false]
	t.Logf("%d rounds of %s: input %d tokens, %.1f %% read from cache (%d), %d written; cost $%.4f with caching, $%.4f without",
		rounds, model, on.usage.InputTokens, 100*on.hitRate(), on.usage.CacheReadTokens, on.usage.CacheWriteTokens, on.cost, off.cost)
	if on.hitRate() < 0.80 {
		t.Errorf("cache hit rate %.2f, want >= 0.80", on.hitRate())
	}
	if off.usage.CacheReadTokens != 0 || off.usage.CacheWriteTokens != 0 {
		t.Errorf("without marks the provider still cached: %+v", off.usage)
	}
	if on.usage.InputTokens != off.usage.InputTokens {
		t.Errorf("input with caching %d, without %d: the prompts differ", on.usage.InputTokens, off.usage.InputTokens)
	}
	if on.cost >= off.cost*0.5 {
		t.Errorf("caching saved too little: $%.4f against $%.4f", on.cost, off.cost)
	}
}

// TestOpenAIPromptCacheKey: the session's cache key goes out as
// prompt_cache_key, and the implicit cache reports cached_tokens for the
// repeated prefix from the second round on.
func TestOpenAIPromptCacheKey(t *testing.T) {
	srv := sim.NewServer()
	defer srv.Close()
	srv.EnablePromptCache(1024)
	client, err := openai.New(openai.Config{BaseURL: srv.URL() + "/v1", APIKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	f := runSession(t, srv, client, "gpt-5", 5, nil)
	reqs := srv.Requests()
	var body struct {
		Key string `json:"prompt_cache_key"`
	}
	if err := json.Unmarshal(reqs[0].Body, &body); err != nil || body.Key != "session-1" {
		t.Fatalf("prompt_cache_key = %q (%v), want session-1", body.Key, err)
	}
	if f.hitRate() < 0.6 {
		t.Errorf("OpenAI hit rate over 5 rounds %.2f (%+v), want >= 0.6", f.hitRate(), f.usage)
	}
	if f.usage.CacheWriteTokens != 0 {
		t.Errorf("OpenAI reports no cache writes, got %d", f.usage.CacheWriteTokens)
	}
}

// TestGeminiImplicitCache: Gemini caches on its own; the repeated prefix
// comes back as cachedContentTokenCount, which the adapter reports as
// cache reads.
func TestGeminiImplicitCache(t *testing.T) {
	srv := sim.NewServer()
	defer srv.Close()
	srv.EnablePromptCache(1024)
	client, err := gemini.New(gemini.Config{BaseURL: srv.URL(), APIKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	f := runSession(t, srv, client, "gemini-2.5-flash", 5, nil)
	if f.hitRate() < 0.6 || f.usage.CacheWriteTokens != 0 {
		t.Errorf("Gemini over 5 rounds: %+v (hit rate %.2f), want >= 0.6 read and no writes", f.usage, f.hitRate())
	}
}
