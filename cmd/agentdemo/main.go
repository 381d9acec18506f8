// Command agentdemo runs one agent session on a small fix task in a fresh
// temporary workspace (a Go package with a bug and a failing test) and prints
// the event stream the way a person wants to watch it.
//
// Without a provider key it starts the simulated model (llm/sim)
// in-process with a scripted conversation that performs the fix through the
// real tools, and says so. With ANTHROPIC_API_KEY, OPENAI_API_KEY or
// GEMINI_API_KEY set (first found wins, or -provider), or with
// AGENTFLEET_LLM_BASE_URL and AGENTFLEET_MODEL for an OpenAI-compatible
// server, the same task runs on the real model.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/agentfleet/agentfleet/agent"
	"github.com/agentfleet/agentfleet/execenv"
)

// task is what the user asks the agent.
const task = "The tests of this Go module fail. Find the bug, fix it, run the tests to confirm, " +
	"and tell me in one or two sentences what you changed."

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "agentdemo:", err)
		os.Exit(1)
	}
}

func run() error {
	providerFlag := flag.String("provider", "", "openai, anthropic, gemini or chatcompat; default: the first API key found, else simulated")
	modelFlag := flag.String("model", os.Getenv("AGENTFLEET_MODEL"), "model name (default per provider)")
	keep := flag.Bool("keep", false, "keep the workspace after the run")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	dir, err := newWorkspace()
	if err != nil {
		return err
	}
	if !*keep {
		defer func() { _ = os.RemoveAll(dir) }()
	}
	env, err := execenv.NewLocal(execenv.LocalConfig{WorkingDir: dir})
	if err != nil {
		return err
	}
	defer func() { _ = env.Cleanup(context.Background()) }()

	m, err := chooseModel(*providerFlag, *modelFlag)
	if err != nil {
		return err
	}
	defer m.close()
	fmt.Printf("agentdemo: %s\nworkspace: %s\n\n", m.describe, dir)

	s, err := agent.New(agent.Config{Client: m.client, Profile: m.profile, Env: env,
		Session: agent.SessionConfig{MaxToolRoundsPerInput: 30}})
	if err != nil {
		return err
	}
	printed := make(chan struct{})
	go func() {
		defer close(printed)
		printEvents(ctx, os.Stdout, s.Subscribe())
	}()
	stopAbort := context.AfterFunc(ctx, s.Abort)
	defer stopAbort()

	start := time.Now()
	out, err := s.Submit(ctx, task)
	_ = s.Close()
	<-printed
	if err != nil {
		return err
	}
	fmt.Printf("\nfinished in %s: %d model turns, %d tool rounds, stop reason %s\n",
		time.Since(start).Round(100*time.Millisecond), out.Turns, out.Rounds, out.Stop)
	return verify(dir)
}
