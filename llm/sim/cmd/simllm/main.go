// Command simllm runs the simulated LLM provider as a standalone process,
// for trying agentfleet without a real provider.
//
//	simllm -addr 127.0.0.1:8089 -text "hello"        answer every request with "hello"
//	simllm -addr 127.0.0.1:8089 -script replies.json  answer with the replies in order, then -text
//
// The script is a JSON array of sim.Reply objects (durations in
// nanoseconds). Point an adapter's base URL at http://ADDR/v1 (or /v1beta for
// Gemini).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/agentfleet/agentfleet/llm/sim"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8089", "address to listen on")
	script := flag.String("script", "", "JSON file with an array of replies served in order")
	text := flag.String("text", "Hello from simllm.", "text of the default reply once the script is used up")
	flag.Parse()
	if err := run(*addr, *script, *text); err != nil {
		fmt.Fprintln(os.Stderr, "simllm:", err)
		os.Exit(1)
	}
}

func run(addr, script, text string) error {
	s := sim.New()
	s.SetDefault(sim.Text(text))
	if script != "" {
		data, err := os.ReadFile(script)
		if err != nil {
			return err
		}
		var replies []sim.Reply
		if err := json.Unmarshal(data, &replies); err != nil {
			return fmt.Errorf("%s must hold a JSON array of replies: %w", script, err)
		}
		s.Enqueue(replies...)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	fmt.Fprintf(os.Stderr, "simllm: serving on http://%s\n", addr)
	return s.ListenAndServe(ctx, addr)
}
