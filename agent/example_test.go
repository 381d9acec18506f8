package agent_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/agentfleet/agentfleet/agent"
	"github.com/agentfleet/agentfleet/execenv"
	"github.com/agentfleet/agentfleet/llm/anthropic"
	"github.com/agentfleet/agentfleet/llm/sim"
	"github.com/agentfleet/agentfleet/profiles"
)

// Example runs one session with the Anthropic profile against the simulated
// model: the model writes a file through the real write_file tool, then
// answers. A host would pass a real client from llm/provider instead.
func Example() {
	ctx := context.Background()
	srv := sim.NewServer()
	defer srv.Close()
	srv.Enqueue(
		sim.ToolCall("toolu_1", "write_file", `{"file_path":"hello.txt","content":"hello\n"}`),
		sim.Text("I wrote hello.txt."),
	)
	client, err := anthropic.New(anthropic.Config{BaseURL: srv.URL(), APIKey: "test"})
	if err != nil {
		panic(err)
	}
	dir, err := os.MkdirTemp("", "agent-example-")
	if err != nil {
		panic(err)
	}
	defer func() { _ = os.RemoveAll(dir) }()
	env, err := execenv.NewLocal(execenv.LocalConfig{WorkingDir: dir})
	if err != nil {
		panic(err)
	}

	s, err := agent.New(agent.Config{Client: client, Profile: profiles.Anthropic("claude-sonnet-4-5"), Env: env})
	if err != nil {
		panic(err)
	}
	sub := s.Subscribe()
	printed := make(chan struct{})
	go func() {
		defer close(printed)
		for ev := range sub.All(ctx) {
			if ev.Kind == agent.EventToolCallStart {
				fmt.Println("tool:", ev.ToolName)
			}
		}
	}()

	out, err := s.Submit(ctx, "Create hello.txt saying hello")
	_ = s.Close()
	<-printed
	if err != nil {
		panic(err)
	}
	content, _ := os.ReadFile(filepath.Join(dir, "hello.txt"))
	fmt.Println(out.Text)
	fmt.Print(string(content))
	// Output:
	// tool: write_file
	// I wrote hello.txt.
	// hello
}
