//go:build smokelive

package smokelive

import (
	"os"
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/llm/provider"
)

func env(name, def string) string {
	if v := strings.TrimSpace(os.Getenv(name)); v != "" {
		return v
	}
	return def
}

func anyEnv(names ...string) bool {
	for _, n := range names {
		if env(n, "") != "" {
			return true
		}
	}
	return false
}

// targets lists every provider, each skipped unless the environment holds
// what it needs.
func targets() []target {
	unless := func(ok bool, why string) string {
		if ok {
			return ""
		}
		return why
	}
	return []target{
		{name: "anthropic", profile: "anthropic", model: env("AGENTFLEET_SMOKE_ANTHROPIC_MODEL", "claude-sonnet-4-5"),
			cfg:  provider.Config{Provider: provider.Anthropic},
			skip: unless(anyEnv("ANTHROPIC_API_KEY"), "ANTHROPIC_API_KEY is not set")},
		{name: "openai", profile: "openai", model: env("AGENTFLEET_SMOKE_OPENAI_MODEL", "gpt-5.2"),
			cfg:  provider.Config{Provider: provider.OpenAI},
			skip: unless(anyEnv("OPENAI_API_KEY"), "OPENAI_API_KEY is not set")},
		{name: "gemini", profile: "gemini", model: env("AGENTFLEET_SMOKE_GEMINI_MODEL", "gemini-2.5-flash"),
			cfg:  provider.Config{Provider: provider.Gemini},
			skip: unless(anyEnv("GEMINI_API_KEY", "GOOGLE_API_KEY"), "neither GEMINI_API_KEY nor GOOGLE_API_KEY is set")},
		{name: "bedrock", profile: "anthropic", model: env("AGENTFLEET_SMOKE_BEDROCK_MODEL", ""),
			cfg:  provider.Config{Provider: provider.Bedrock, Region: env("AGENTFLEET_SMOKE_BEDROCK_REGION", "")},
			skip: unless(anyEnv("AGENTFLEET_SMOKE_BEDROCK_MODEL"), "AGENTFLEET_SMOKE_BEDROCK_MODEL is not set (e.g. global.anthropic.claude-sonnet-4-5-20250929-v1:0; credentials from the AWS SDK's chain)")},
		{name: "vertex", profile: vertexProfile(env("AGENTFLEET_SMOKE_VERTEX_MODEL", "gemini-2.5-flash")),
			model: env("AGENTFLEET_SMOKE_VERTEX_MODEL", "gemini-2.5-flash"),
			cfg:   provider.Config{Provider: provider.Vertex, Project: env("AGENTFLEET_SMOKE_VERTEX_PROJECT", ""), Region: env("AGENTFLEET_SMOKE_VERTEX_REGION", "global")},
			skip:  unless(anyEnv("AGENTFLEET_SMOKE_VERTEX_PROJECT"), "AGENTFLEET_SMOKE_VERTEX_PROJECT is not set (credentials: Application Default Credentials)")},
		{name: "azure", profile: "openai", model: env("AGENTFLEET_SMOKE_AZURE_DEPLOYMENT", ""),
			cfg:  provider.Config{Provider: provider.Azure},
			skip: unless(anyEnv("AZURE_OPENAI_ENDPOINT") && anyEnv("AGENTFLEET_SMOKE_AZURE_DEPLOYMENT"), "AZURE_OPENAI_ENDPOINT and AGENTFLEET_SMOKE_AZURE_DEPLOYMENT are not both set")},
		{name: "chatcompat", profile: "openai", model: env("AGENTFLEET_SMOKE_MODEL", ""), local: true,
			cfg: provider.Config{Provider: provider.ChatCompat, BaseURL: env("AGENTFLEET_SMOKE_BASE_URL", ""),
				Dialect: env("AGENTFLEET_SMOKE_DIALECT", ""), APIKey: env("AGENTFLEET_SMOKE_API_KEY", "")},
			skip: unless(anyEnv("AGENTFLEET_SMOKE_BASE_URL") && anyEnv("AGENTFLEET_SMOKE_MODEL"), "AGENTFLEET_SMOKE_BASE_URL and AGENTFLEET_SMOKE_MODEL are not both set")},
	}
}

func vertexProfile(model string) string {
	if strings.HasPrefix(model, "claude") {
		return "anthropic"
	}
	return "gemini"
}

// TestSmokeLive runs every check against each configured provider, one
// after another (a live run is about correctness, not speed).
func TestSmokeLive(t *testing.T) {
	ran := 0
	for _, tg := range targets() {
		t.Run(tg.name, func(t *testing.T) {
			if tg.skip != "" {
				t.Skipf("skipping %s: %s", tg.name, tg.skip)
			}
			ran++
			c, err := provider.New(tg.cfg)
			if err != nil {
				t.Fatalf("building the %s client: %v", tg.name, err)
			}
			r := newRun(t, tg, c)
			r.callChecks(t)
			t.Run("seed_session_steps", r.sessionSteps)
		})
	}
	if ran == 0 {
		t.Log("smoke-live: no provider credentials are set, so every provider was skipped (see docs/operations.md, Live smoke test)")
	}
}
