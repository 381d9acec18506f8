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
// has: the Anthropic shell's parameter is "timeout", the Gemini shell has
// none, and only the OpenAI (and core) shell takes timeout_ms.
func TestTimeoutAdviceNamesTheProfilesOwnParameter(t *testing.T) {
	for _, tt := range []struct {
		p            *profiles.Profile
		want, reject string
	}{
		{profiles.Anthropic("claude"), "setting the timeout parameter", "timeout_ms"},
		{profiles.Gemini("gemini"), "no timeout parameter", "timeout_ms"},
		{profiles.OpenAI("gpt"), "setting the timeout_ms parameter", "no timeout parameter"},
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
