// Command redteam attacks a real fleet from inside its tasks and prints
// what got out (see internal/redteam and docs/redteam.md). It starts an
// in-process fleet with a scripted simulated model, runs each probe as a
// fleet task submitted through the API, and checks the probe's effect from
// outside with a canary. It exits 1 when a probe escaped or failed to run.
//
//	go run ./cmd/redteam                 every probe
//	go run ./cmd/redteam -run 'symlink|shared'
//	go run ./cmd/redteam -list
//
// `make redteam` builds it and runs it (CI runs it as root and as an
// unprivileged user).
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"regexp"
	"syscall"
	"text/tabwriter"

	"github.com/agentfleet/agentfleet/internal/redteam"
)

func main() {
	run := flag.String("run", "", "run only the probes whose name matches this regular expression")
	list := flag.Bool("list", false, "list the probes and exit")
	dir := flag.String("dir", "", "the run's directory (default a new temporary one, removed after a run without escapes)")
	verbose := flag.Bool("v", false, "print every stored text of each probe's task, and the fleet's logs, to stderr")
	flag.Parse()
	if *list {
		tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "PROBE\t#27\tWHAT")
		for _, p := range redteam.Probes() {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", p.Name, p.Issue, p.What)
		}
		_ = tw.Flush()
		return
	}
	cfg := redteam.Config{Dir: *dir, Verbose: *verbose}
	if *run != "" {
		re, err := regexp.Compile(*run)
		if err != nil {
			fmt.Fprintf(os.Stderr, "redteam: -run %q is not a regular expression: %v\n", *run, err)
			os.Exit(2)
		}
		cfg.Match = re
	}
	if *verbose {
		cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	results, err := redteam.Run(ctx, cfg, os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if redteam.Failed(results) {
		fmt.Println("\nredteam: FAILED: a probe escaped (or could not run); see the table")
		os.Exit(1)
	}
	fmt.Println("\nredteam: every probe held")
}
