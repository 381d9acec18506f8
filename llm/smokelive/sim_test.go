package smokelive

import (
	"testing"

	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/llm/provider"
	"github.com/agentfleet/agentfleet/llm/sim"
)

// The smoke run's call checks pass against the simulated provider
// (Anthropic's wire, its prompt cache on) answering as a model would, so
// the harness that `make smoke-live` points at real providers is itself
// tested on every run of the suite.
func TestCallChecksAgainstTheSimulator(t *testing.T) {
	srv := sim.NewServer()
	t.Cleanup(srv.Close)
	srv.EnablePromptCache(1024)
	usage := llm.Usage{InputTokens: 200, OutputTokens: 12}
	with := func(r sim.Reply) sim.Reply { r.Usage = usage; return r }
	srv.Enqueue(
		with(sim.Text("pong")),
		with(sim.ToolCall("toolu_1", "add", `{"a":1234,"b":4321}`)),
		with(sim.Text("The sum is 5,555.")),
		with(sim.Text("0x5ccc")), // writes the cache
		with(sim.Text("0x5ccc")), // reads it
		with(sim.ToolCall("toolu_2", "capital", `{"city":"Paris","country_code":"FR"}`)),
	)
	c, err := provider.New(provider.Config{Provider: provider.Anthropic, BaseURL: srv.URL(), APIKey: "sk-ant-sim"})
	if err != nil {
		t.Fatal(err)
	}
	r := newRun(t, target{name: "sim", profile: "anthropic", model: "claude-sonnet-4-5"}, c)
	r.callChecks(t)
	if n := srv.Pending(); n != 0 {
		t.Errorf("%d scripted replies left: a check made fewer calls than it should", n)
	}
	if len(r.usage) != 6 {
		t.Errorf("%d calls counted for the cost, want 6", len(r.usage))
	}
}
