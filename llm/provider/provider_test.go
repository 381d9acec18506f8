package provider

import (
	"context"
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/llm/chatcompat"
	"github.com/agentfleet/agentfleet/llm/sim"
)

func TestDetect(t *testing.T) {
	tests := []struct {
		cfg  Config
		want string
	}{
		{Config{Provider: "OpenAI"}, OpenAI},
		{Config{Provider: "google"}, Gemini},
		{Config{Provider: "ollama", Model: "claude-3"}, ChatCompat},
		{Config{Model: "gpt-5"}, OpenAI},
		{Config{Model: "o4-mini"}, OpenAI},
		{Config{Model: "o3"}, OpenAI},
		{Config{Model: "codex-mini-latest"}, OpenAI},
		{Config{Model: "claude-sonnet-4-5"}, Anthropic},
		{Config{Model: "gemini-2.5-flash"}, Gemini},
		{Config{Model: "models/gemini-3-pro-preview"}, Gemini},
		{Config{Model: "gpt-5", BaseURL: "http://localhost:11434/v1"}, ChatCompat},
		{Config{Model: "llama3", BaseURL: "https://api.openai.com/v1"}, OpenAI},
		{Config{Model: "x", BaseURL: "https://api.anthropic.com"}, Anthropic},
		{Config{BaseURL: "https://generativelanguage.googleapis.com"}, Gemini},
	}
	for _, tt := range tests {
		got, err := Detect(tt.cfg)
		if err != nil || got != tt.want {
			t.Errorf("Detect(%+v) = %q, %v; want %q", tt.cfg, got, err, tt.want)
		}
	}
}

func TestDetectErrors(t *testing.T) {
	for _, cfg := range []Config{{Provider: "acme"}, {Model: "llama3"}, {Model: "x", BaseURL: "not a url"}} {
		_, err := Detect(cfg)
		if err == nil || !strings.Contains(err.Error(), "Config.") {
			t.Errorf("Detect(%+v) = %v, want an error naming the field to set", cfg, err)
		}
	}
}

func TestMissingKeyNamesVariable(t *testing.T) {
	for _, v := range []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"} {
		t.Setenv(v, "")
	}
	for model, want := range map[string]string{"gpt-5": "OPENAI_API_KEY", "claude-sonnet-4": "ANTHROPIC_API_KEY", "gemini-2.5-pro": "GEMINI_API_KEY or GOOGLE_API_KEY"} {
		c, err := New(Config{Model: model})
		if err == nil || c != nil || !strings.Contains(err.Error(), want) {
			t.Errorf("New(%s) = %v, %v; want an error naming %s", model, c, err, want)
		}
	}
	if _, err := New(Config{Provider: ChatCompat}); err == nil || !strings.Contains(err.Error(), "BaseURL") {
		t.Errorf("chatcompat without a base URL: %v", err)
	}
}

// TestNewTalksToEachDialect builds each adapter from the environment and
// sends one request to the simulated provider, checking the key arrived.
func TestNewTalksToEachDialect(t *testing.T) {
	srv := sim.NewServer()
	defer srv.Close()
	t.Setenv("OPENAI_API_KEY", "sk-openai")
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant")
	t.Setenv("GEMINI_API_KEY", "")
	t.Setenv("GOOGLE_API_KEY", "g-key")
	tests := []struct {
		cfg    Config
		header string
		want   string
	}{
		{Config{Provider: OpenAI, BaseURL: srv.URL() + "/v1"}, "Authorization", "Bearer sk-openai"},
		{Config{Provider: Anthropic, BaseURL: srv.URL()}, "X-Api-Key", "sk-ant"},
		{Config{Provider: Gemini, BaseURL: srv.URL()}, "X-Goog-Api-Key", "g-key"},
		{Config{BaseURL: srv.URL() + "/v1", APIKey: "local"}, "Authorization", "Bearer local"},
	}
	for i, tt := range tests {
		c, err := New(tt.cfg)
		if err != nil {
			t.Fatalf("New(%+v): %v", tt.cfg, err)
		}
		srv.Enqueue(sim.Text("hi"))
		resp, err := c.Complete(context.Background(), llm.Request{Model: "m-1", Messages: []llm.Message{llm.UserMessage("hello")}})
		if err != nil || resp.Text() != "hi" {
			t.Fatalf("%+v: %v, %v", tt.cfg, resp, err)
		}
		if got := srv.Requests()[i].Header.Get(tt.header); got != tt.want {
			t.Errorf("%+v: header %s = %q, want %q", tt.cfg, tt.header, got, tt.want)
		}
	}
}

// TestDialectFromProviderOrHost: a dialect named as the provider fills in
// its base URL and key variable; a base URL's host picks its dialect; an
// override reaches the request.
func TestDialectFromProviderOrHost(t *testing.T) {
	srv := sim.NewServer()
	defer srv.Close()
	srv.SetDefault(sim.Text("ok"))
	t.Setenv("MISTRAL_API_KEY", "mk-test")
	req := llm.Request{Model: "m", MaxOutputTokens: 100, Messages: []llm.Message{llm.UserMessage("hi")}}
	field := "max_completion_tokens"
	for i, c := range []struct {
		cfg       Config
		wantField string
		wantKey   string
	}{
		{Config{Provider: "mistral", BaseURL: srv.URL() + "/v1"}, `"max_tokens":100`, "Bearer mk-test"},
		{Config{Provider: "groq", BaseURL: srv.URL() + "/openai/v1", APIKey: "gk"}, `"max_completion_tokens":100`, "Bearer gk"},
		{Config{Provider: ChatCompat, Dialect: "mistral", BaseURL: srv.URL() + "/v1", DialectOverrides: chatcompatOverride(&field)}, `"max_completion_tokens":100`, "Bearer mk-test"},
	} {
		cl, err := New(c.cfg)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cl.Complete(context.Background(), req); err != nil {
			t.Fatal(err)
		}
		got := srv.Requests()[i]
		if !strings.Contains(string(got.Body), c.wantField) || got.Header.Get("Authorization") != c.wantKey {
			t.Errorf("%+v: body %s auth %q; want %s and %s", c.cfg, got.Body, got.Header.Get("Authorization"), c.wantField, c.wantKey)
		}
	}
	if _, err := New(Config{Provider: ChatCompat, Dialect: "nope", BaseURL: srv.URL()}); err == nil || !strings.Contains(err.Error(), "Config.Dialect") {
		t.Errorf("unknown dialect: %v", err)
	}
	d, err := Detect(Config{Provider: "cerebras"})
	if err != nil || d != ChatCompat {
		t.Errorf("Detect(cerebras) = %s, %v", d, err)
	}
}

func chatcompatOverride(field *string) chatcompat.Overrides {
	return chatcompat.Overrides{MaxTokensField: field}
}

// TestAzure: the provider kind, by name or by an *.openai.azure.com host,
// with its key and api-version from the environment.
func TestAzure(t *testing.T) {
	if d, err := Detect(Config{BaseURL: "https://my-res.openai.azure.com"}); err != nil || d != Azure {
		t.Errorf("Detect(azure host) = %s, %v", d, err)
	}
	srv := sim.NewServer()
	defer srv.Close()
	srv.SetDefault(sim.Text("ok"))
	t.Setenv("AZURE_OPENAI_API_KEY", "az-env")
	t.Setenv("AZURE_OPENAI_API_VERSION", "2025-01-01-preview")
	c, err := New(Config{Provider: Azure, BaseURL: srv.URL()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Complete(context.Background(), llm.Request{Model: "dep", Messages: []llm.Message{llm.UserMessage("hi")}}); err != nil {
		t.Fatal(err)
	}
	r := srv.Requests()[0]
	if r.Path != "/openai/deployments/dep/chat/completions" || r.Query != "api-version=2025-01-01-preview" || r.Header.Get("Api-Key") != "az-env" {
		t.Errorf("request %s?%s api-key %q", r.Path, r.Query, r.Header.Get("Api-Key"))
	}
	t.Setenv("AZURE_OPENAI_API_KEY", "")
	if _, err := New(Config{Provider: Azure, BaseURL: srv.URL(), AzureAuth: "key"}); err == nil || !strings.Contains(err.Error(), "AZURE_OPENAI_API_KEY") {
		t.Errorf("no key: %v", err)
	}
}
