package agent_test

import (
	"strings"
	"testing"
	"time"

	"github.com/agentfleet/agentfleet/agent"
	"github.com/agentfleet/agentfleet/llm/sim"
)

// The shell's schema and description state the session's own timeouts: a
// session allowing an hour offers an hour (not the 600 s of the profile's
// defaults) and a call asking for 30 minutes is not refused by the schema
// (no schema caps the timeout: the session's maximum cuts a longer one).
func TestShellSchemaStatesSessionTimeouts(t *testing.T) {
	forEachProvider(t, func(t *testing.T, p provider) {
		cfg := agent.Config{Session: agent.SessionConfig{DefaultCommandTimeout: 5 * time.Minute, MaxCommandTimeout: time.Hour}}
		w := newWorld(t, p, cfg)
		long := w.shellWithTimeout("echo ran", 30*60*1000)
		if p.name == "gemini" {
			long = w.tc("shell", map[string]any{"command": "echo ran", "timeout_seconds": 1800})
		}
		w.script(calls(long), sim.Text("done"))
		w.submit("run it")
		body := w.body(0)
		want := map[string][]string{
			"openai":    {"The default timeout is 5 minutes", "default 300000, at most 3600000"},
			"anthropic": {"300000 ms (5 minutes)", "default 300000, at most 3600000"},
			"gemini":    {"time out after 5 minutes", "(at most 3600); the session default (300)"},
		}[p.name]
		for _, s := range want {
			contains(t, "request", body, s)
		}
		if i := strings.Index(body, "at most 600000"); i >= 0 {
			t.Fatalf("the request still states the 600 s cap: ...%s...", body[max(i-300, 0):i+50])
		}
		if r := w.result(long.ID); r.IsError || !strings.Contains(r.Content, "ran") {
			t.Fatalf("a 30-minute timeout within the session's hour was refused: %s", r.Content)
		}
		if err := w.s.SetCommandTimeout(20 * time.Minute); err != nil {
			t.Fatal(err)
		}
		w.script(sim.Text("ok"))
		w.submit("again")
		contains(t, "request after SetCommandTimeout", w.body(-1), "20 minutes")
	})
}
