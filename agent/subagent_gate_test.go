package agent_test

import (
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/agent"
	"github.com/agentfleet/agentfleet/execenv"
	"github.com/agentfleet/agentfleet/profiles"
)

// A session that may not spawn (max depth forbids it, or its depth has
// reached the maximum) neither offers the subagent tools nor describes them
// in its system prompt; one that may spawn does both.
func TestSubagentToolsOnlyWhenSpawningIsAllowed(t *testing.T) {
	cases := []struct {
		name  string
		depth int
		max   int
		want  bool
	}{
		{"top level, default depth", 0, 0, true},
		{"spawning forbidden", 0, -1, false},
		{"depth reached", 1, 1, false},
		{"depth left", 1, 2, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			client := newFakeClient(step{text: "done"})
			env, err := execenv.NewLocal(execenv.LocalConfig{WorkingDir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			b := setup(t, agent.Config{Profile: profiles.OpenAI("gpt-5"), Env: env, Depth: c.depth,
				Session: agent.SessionConfig{MaxSubagentDepth: c.max}}, client)
			if _, err := b.s.Submit(ctx30(t), "go"); err != nil {
				t.Fatal(err)
			}
			req := client.Requests()[0]
			prompt := req.Messages[0].Text()
			if got := strings.Contains(prompt, "spawn_agent"); got != c.want {
				t.Errorf("system prompt mentions spawn_agent = %v, want %v", got, c.want)
			}
			offered := false
			for _, d := range req.Tools {
				if d.Name == "spawn_agent" || d.Name == "wait" || d.Name == "send_input" || d.Name == "close_agent" {
					offered = true
				}
			}
			if offered != c.want {
				t.Errorf("subagent tools offered = %v, want %v", offered, c.want)
			}
		})
	}
}
