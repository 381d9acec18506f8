package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/spf13/cobra"

	"github.com/agentfleet/agentfleet/cmd/internal/cli"
	"github.com/agentfleet/agentfleet/fleet/bench"
)

// postmasterPID finds the process of the Postgres server at url when it
// runs on this machine, so that the bench can report the server's CPU: it
// reads postmaster.pid in the server's data directory and checks that the
// file's start time is the server's (a file of another server at the same
// path does not match). Reading data_directory needs a superuser or the
// pg_read_all_settings role.
func postmasterPID(ctx context.Context, url string) (int, error) {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return 0, err
	}
	defer func() { _ = conn.Close(ctx) }()
	var dir string
	var started int64
	err = conn.QueryRow(ctx, `SELECT current_setting('data_directory'),
		floor(extract(epoch FROM pg_postmaster_start_time()))::bigint`).Scan(&dir, &started)
	if err != nil {
		return 0, fmt.Errorf("read the server's data directory: %w", err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "postmaster.pid"))
	if err != nil {
		return 0, fmt.Errorf("the server is not on this machine or its files are not readable: %w", err)
	}
	return parsePostmasterPID(string(b), started)
}

// parsePostmasterPID reads postmaster.pid: the server's pid on its first
// line, its start time (Unix seconds) on its third.
func parsePostmasterPID(file string, started int64) (int, error) {
	lines := strings.Split(strings.TrimSuffix(file, "\n"), "\n")
	if len(lines) < 3 {
		return 0, errors.New("postmaster.pid has fewer than three lines")
	}
	pid, err := strconv.Atoi(strings.TrimSpace(lines[0]))
	if err != nil || pid <= 0 {
		return 0, fmt.Errorf("postmaster.pid: %q is not a process id", lines[0])
	}
	at, err := strconv.ParseInt(strings.TrimSpace(lines[2]), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("postmaster.pid: %q is not a start time", lines[2])
	}
	if at != started {
		return 0, errors.New("postmaster.pid on this machine belongs to another server than the one connected to")
	}
	return pid, nil
}

// storeServerPID is the postmaster of $AGENTFLEET_DATABASE_URL when its
// CPU can be measured here, else 0 with the reason on stderr.
func storeServerPID(c *cobra.Command) int {
	pid, err := postmasterPID(c.Context(), os.Getenv(cli.EnvDatabaseURL))
	if err == nil {
		_, err = bench.ServerCPU(pid)
	}
	if err != nil {
		_, _ = fmt.Fprintf(c.ErrOrStderr(), "not reporting the store's CPU: %v\n", err)
		return 0
	}
	return pid
}
