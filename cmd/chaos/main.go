// Command chaos builds the fleet's binaries, starts a production-shaped
// fleet from them and runs the fault scenarios of internal/chaos, printing
// a verification table. It exits 1 if any scenario lost work.
//
//	go run ./cmd/chaos            the long run (300 tasks per scenario)
//	go run ./cmd/chaos -short     the CI run (45 tasks per scenario)
//	go run ./cmd/chaos -only postgres-down,worker-drain
//
// It needs Linux, the PostgreSQL server binaries (initdb, postgres) and
// the Go toolchain.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/agentfleet/agentfleet/internal/chaos"
)

func main() {
	short := flag.Bool("short", false, "the CI run: a smaller backlog per scenario")
	tasks := flag.Int("tasks", 0, "tasks per scenario (default 300, -short 45)")
	only := flag.String("only", "", "comma-separated scenario name prefixes to run (default all)")
	keep := flag.Bool("keep", false, "keep the run's directory (logs, data) after a passing run")
	flag.Parse()
	cfg := chaos.Defaults()
	if *short {
		cfg = chaos.Short()
	}
	if *tasks > 0 {
		cfg.Tasks = *tasks
	}
	if *only != "" {
		cfg.Only = strings.Split(*only, ",")
	}
	if err := run(cfg, *keep); err != nil {
		fmt.Fprintln(os.Stderr, "chaos:", err)
		os.Exit(1)
	}
}

func run(cfg chaos.Config, keep bool) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	dir, err := os.MkdirTemp("", "agentfleet-chaos-")
	if err != nil {
		return err
	}
	// The Postgres server runs as an unprivileged user when this runs as root.
	if err := os.Chmod(dir, 0o755); err != nil {
		return err
	}
	cfg.Dir, cfg.BinDir, cfg.NATSConf = dir, filepath.Join(dir, "bin"), "deploy/nats/nats.conf"
	if err := build(ctx, cfg.BinDir); err != nil {
		return err
	}
	_, err = chaos.Run(ctx, cfg, os.Stdout)
	if err != nil || keep {
		fmt.Fprintf(os.Stderr, "chaos: logs and data kept in %s\n", dir)
		return err
	}
	return os.RemoveAll(dir)
}

// build compiles the binaries the fleet runs, nats-server from the module's
// own dependency.
func build(ctx context.Context, binDir string) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-o", binDir+"/", "./cmd/dispatcher", "./cmd/worker",
		"./llm/sim/cmd/simllm", "github.com/nats-io/nats-server/v2")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("building the binaries: %w", err)
	}
	return nil
}
