package profiles_test

import (
	"context"
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/execenv"
	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/profiles"
	"github.com/agentfleet/agentfleet/tools"
)

// A timed-out shell call tells the model what it can do with the shell it
// has: the Anthropic shell's parameter is "timeout", the Gemini shell's
// timeout_seconds, and only the OpenAI (and core) shell takes timeout_ms.
func TestTimeoutAdviceNamesTheProfilesOwnParameter(t *testing.T) {
	for _, tt := range []struct {
		p            *profiles.Profile
		want, reject string
	}{
		{profiles.Anthropic("claude"), "setting the timeout parameter", "timeout_ms"},
		{profiles.Gemini("gemini"), "setting the timeout_seconds parameter", "timeout_ms"},
		{profiles.OpenAI("gpt"), "setting the timeout_ms parameter", "timeout_seconds"},
	} {
		env, err := execenv.NewLocal(execenv.LocalConfig{WorkingDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		call := llm.ToolCall{ID: "c1", Name: "shell", Arguments: []byte(`{"command":"echo started; sleep 30"}`)}
		res := tt.p.Registry().Execute(context.Background(), call, env,
			tools.ExecOptions{Settings: tools.Settings{DefaultCommandTimeoutMs: 300}})
		if !res.IsError || !strings.Contains(res.Content, "timed out") {
			t.Fatalf("%s: the call did not time out: %q", tt.p.ID(), res.Content)
		}
		if !strings.Contains(res.Content, tt.want) || strings.Contains(res.Content, tt.reject) {
			t.Errorf("%s: timeout advice %q; want %q and not %q", tt.p.ID(), res.Content, tt.want, tt.reject)
		}
		_ = env.Cleanup(context.Background())
	}
}

// The Gemini shell's timeout_seconds gives a command longer than the
// session's default, within the session's maximum.
func TestGeminiShellTimeoutSeconds(t *testing.T) {
	env, err := execenv.NewLocal(execenv.LocalConfig{WorkingDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = env.Cleanup(context.Background()) }()
	reg := profiles.Gemini("gemini").Registry()
	opts := tools.ExecOptions{Settings: tools.Settings{DefaultCommandTimeoutMs: 200, MaxCommandTimeoutMs: 60_000}}
	call := llm.ToolCall{ID: "c1", Name: "shell", Arguments: []byte(`{"command":"sleep 1; echo finished","timeout_seconds":5}`)}
	if res := reg.Execute(context.Background(), call, env, opts); res.IsError || !strings.Contains(res.Content, "finished") {
		t.Fatalf("a 1s command with timeout_seconds 5 (default 200ms): %q", res.Content)
	}
	call.Arguments = []byte(`{"command":"sleep 1; echo finished"}`)
	if res := reg.Execute(context.Background(), call, env, opts); !strings.Contains(res.Content, "timed out") {
		t.Fatalf("without timeout_seconds the 200ms default did not apply: %q", res.Content)
	}
}
