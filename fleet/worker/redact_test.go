package worker_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/agent"
	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/checks"
	"github.com/agentfleet/agentfleet/fleet/delivery"
	"github.com/agentfleet/agentfleet/fleet/fleettest"
	"github.com/agentfleet/agentfleet/fleet/worker"
	"github.com/agentfleet/agentfleet/store"
)

// TestToolOutputIsRedacted: secrets the worker knows (a delivery token
// from its file, an MCP secret, a provider key, a database password of
// `worker run`, a secret-named variable of its environment, the password
// of a URL in its environment) printed by a task's command or check
// reach neither the task's events, its stored turns nor the check's
// output: each is [redacted:NAME]. The command assembles them from
// halves, so its arguments do not hold them.
func TestToolOutputIsRedacted(t *testing.T) {
	halves := map[string][2]string{ // name in the redaction -> the secret's halves
		"delivery.tokens.gh":       {"ghp_deliv", "ery0123456789"},
		"mcp_secrets.search":       {"mcp-secret", "-0123456789"},
		"providers.openai.api_key": {"sk-provider", "-0123456789"},
		"database_url":             {"db-passw", "ord-0123456789"},
		"GITHUB_PAT":               {"github_pat", "_0123456789"},
		"MIRROR_URL":               {"mirror-pass", "word-0123"}, // the password of a URL
	}
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte(join(halves["delivery.tokens.gh"])+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GITHUB_PAT", join(halves["GITHUB_PAT"]))
	t.Setenv("MIRROR_URL", "https://mirror:"+join(halves["MIRROR_URL"])+"@mirror.example.com/git")
	f := fleettest.Start(t, fleettest.Options{Workers: 1, Worker: func(_ int, c *worker.Config) {
		c.Delivery.Tokens = map[string]delivery.Token{"gh": {TokenFile: tokenFile, Forge: "github"}}
		c.MCPSecrets = map[string]string{"search": join(halves["mcp_secrets.search"])}
		pc := c.Providers["openai"]
		pc.APIKey = join(halves["providers.openai.api_key"])
		c.Providers["openai"] = pc
		c.KnownSecrets = map[string]string{"database_url": join(halves["database_url"])}
	}})
	var cmd strings.Builder
	for _, h := range halves {
		cmd.WriteString("printf '%s%s\\n' " + h[0] + " " + h[1] + "; printf '%s%s\\n' " + h[0] + " " + h[1] + " >&2; ")
	}
	spec := fleettest.Spec("leak",
		fleettest.Step{Calls: []fleettest.Call{fleettest.Shell(cmd.String())}},
		fleettest.Step{Text: "printed: {{results}}"})
	spec.Checks = []fleet.Check{{Name: "leaks", Command: cmd.String()}} // a check's output is redacted too
	id := f.Submit(spec)
	res := succeeded(t, f.WaitDone(id))
	if res.Checks == nil || len(res.Checks.Runs) != 1 {
		t.Fatalf("checks %+v", res.Checks)
	}
	check, err := f.Store.GetArtifact(waitCtx(t), store.GetArtifactParams{TaskID: id, Kind: checks.ArtifactKind, Name: res.Checks.Runs[0].Output})
	if err != nil {
		t.Fatal(err)
	}
	var events, ended strings.Builder
	for _, ev := range sessionEvents(t, f, id) {
		events.Write(ev.Data)
		if ev.Kind == string(agent.EventToolCallEnd) {
			var data agent.Event
			_ = json.Unmarshal(ev.Data, &data)
			ended.WriteString(data.Output)
		}
	}
	turns, err := f.Store.LoadTurns(waitCtx(t), store.LoadTurnsParams{SessionID: id})
	if err != nil {
		t.Fatal(err)
	}
	var stored strings.Builder
	for _, turn := range turns {
		stored.Write(turn.Payload)
	}
	for name, h := range halves {
		secret := h[0] + h[1]
		for what, text := range map[string]string{"the events": events.String(), "the stored turns": stored.String(),
			"the final answer": res.FinalText, "the check's output": string(check.Content)} {
			if strings.Contains(text, secret) {
				t.Errorf("%s hold %s's value", what, name)
			}
		}
		if strings.Count(ended.String(), "[redacted:"+name+"]") != 2 {
			t.Errorf("TOOL_CALL_END does not say [redacted:%s] for stdout and stderr:\n%s", name, ended.String())
		}
	}
}

func join(h [2]string) string { return h[0] + h[1] }
