package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/llm/anthropic"
	"github.com/agentfleet/agentfleet/llm/provider"
	"github.com/agentfleet/agentfleet/llm/sim"
	"github.com/agentfleet/agentfleet/profiles"
)

// model is the client and profile the session uses.
type model struct {
	client   llm.Client
	profile  *profiles.Profile
	describe string
	close    func()
}

// defaultModels are used when no model is named.
var defaultModels = map[string]string{
	provider.OpenAI: "gpt-5.2-codex", provider.Anthropic: "claude-sonnet-4-5", provider.Gemini: "gemini-2.5-pro",
}

// chooseModel picks a real provider from the flags and environment, or the
// simulated one when no key is set.
func chooseModel(name, modelName string) (model, error) {
	base := os.Getenv("AGENTFLEET_LLM_BASE_URL")
	if name == "" {
		name = detectProvider(base)
	}
	if name == "" {
		return simulated()
	}
	if modelName == "" {
		modelName = defaultModels[name]
	}
	if modelName == "" {
		return model{}, fmt.Errorf("name the model with -model or AGENTFLEET_MODEL for provider %s", name)
	}
	client, err := provider.New(provider.Config{Provider: name, Model: modelName, BaseURL: base})
	if err != nil {
		return model{}, err
	}
	p, err := profiles.ForProvider(name, modelName)
	if err != nil {
		return model{}, err
	}
	return model{client: client, profile: p, close: func() {},
		describe: fmt.Sprintf("real model %s via %s (profile %s)", modelName, name, p.ID())}, nil
}

func detectProvider(baseURL string) string {
	switch {
	case baseURL != "":
		return provider.ChatCompat
	case os.Getenv("ANTHROPIC_API_KEY") != "":
		return provider.Anthropic
	case os.Getenv("OPENAI_API_KEY") != "":
		return provider.OpenAI
	case os.Getenv("GEMINI_API_KEY") != "" || os.Getenv("GOOGLE_API_KEY") != "":
		return provider.Gemini
	}
	return ""
}

// simulated starts llm/sim in-process with the scripted fix: look at the
// code, run the failing test, edit the bug, run the test again, report.
// Every tool call is executed for real.
func simulated() (model, error) {
	srv := sim.NewServer()
	client, err := anthropic.New(anthropic.Config{BaseURL: srv.URL(), APIKey: "simulated"})
	if err != nil {
		srv.Close()
		return model{}, err
	}
	srv.Enqueue(
		sim.Reply{Text: "I'll start by reading the package and its test.", ToolCalls: []sim.ToolCallReply{
			call("read_file", map[string]any{"file_path": "stats.go"}),
			call("read_file", map[string]any{"file_path": "stats_test.go"}),
		}, ChunkSize: 6},
		sim.Reply{Text: "Let me run the tests to see the failure.", ToolCalls: []sim.ToolCallReply{
			call("shell", map[string]any{"command": "go test ./...", "description": "Run the tests"}),
		}, ChunkSize: 6},
		sim.Reply{Text: "Average divides by len(xs)+1 instead of len(xs). Fixing that.", ToolCalls: []sim.ToolCallReply{
			call("edit_file", map[string]any{"file_path": "stats.go", "old_string": buggyLine, "new_string": fixedLine}),
		}, ChunkSize: 6},
		sim.Reply{Text: "Running the tests again.", ToolCalls: []sim.ToolCallReply{
			call("shell", map[string]any{"command": "go test ./...", "description": "Run the tests"}),
		}, ChunkSize: 6},
		sim.Reply{Text: "Fixed an off-by-one in Average (stats.go): it divided the sum by len(xs)+1; it now divides by len(xs), and go test passes.", ChunkSize: 6},
	)
	return model{client: client, profile: profiles.Anthropic("claude-sonnet-4-5"), close: srv.Close,
		describe: "SIMULATED model (llm/sim in this process, scripted; no provider key found). " +
			"Set ANTHROPIC_API_KEY, OPENAI_API_KEY or GEMINI_API_KEY, or AGENTFLEET_LLM_BASE_URL and AGENTFLEET_MODEL, to use a real model."}, nil
}

var callN int

func call(name string, args map[string]any) sim.ToolCallReply {
	b, _ := json.Marshal(args)
	callN++
	return sim.ToolCallReply{ID: fmt.Sprintf("toolu_demo_%d", callN), Name: name, Arguments: string(b)}
}
