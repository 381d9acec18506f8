// Command simllm runs the simulated LLM provider as a standalone process,
// for trying agentfleet without a real provider.
//
//	simllm -addr 127.0.0.1:8089 -text "hello"        answer every request with "hello"
//	simllm -addr 127.0.0.1:8089 -script replies.json  answer with the replies in order, then -text
//	simllm -addr 127.0.0.1:8089 -scripted             answer each conversation from the script in its prompt
//
// The script is a JSON array of sim.Reply objects (durations in
// nanoseconds). Point an adapter's base URL at http://ADDR (Anthropic,
// Gemini) or http://ADDR/v1 (OpenAI), as docs/simulated-provider.md says.
//
// With -scripted the server is a scripted.Model (Anthropic Messages API
// only): each task prompt made by scripted.Prompt carries its own steps, so
// many workers can share the server and a resumed session gets the same
// answers. GET /stats then returns {"requests": N, "repeats": M}, M being
// the requests beyond one per step of a conversation.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/agentfleet/agentfleet/llm/sim"
	"github.com/agentfleet/agentfleet/llm/sim/scripted"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8089", "address to listen on")
	script := flag.String("script", "", "JSON file with an array of replies served in order")
	text := flag.String("text", "Hello from simllm.", "text of the default reply once the script is used up")
	perPrompt := flag.Bool("scripted", false, "answer each conversation from the script in its first message (Anthropic API)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	var err error
	if *perPrompt {
		err = serveScripted(ctx, *addr)
	} else {
		err = run(ctx, *addr, *script, *text)
	}
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "simllm:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, addr, script, text string) error {
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
	fmt.Fprintf(os.Stderr, "simllm: serving on http://%s\n", addr)
	return s.ListenAndServe(ctx, addr)
}

// serveScripted serves a scripted.Model and its request counts on GET /stats.
func serveScripted(ctx context.Context, addr string) error {
	m := scripted.New()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /stats", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]int{"requests": m.Total(), "repeats": m.Repeats()})
	})
	mux.Handle("/", m)
	srv := &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	fmt.Fprintf(os.Stderr, "simllm: serving scripted conversations on http://%s\n", addr)
	if err := srv.ListenAndServe(); err != http.ErrServerClosed {
		return err
	}
	return nil
}
