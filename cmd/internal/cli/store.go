package cli

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/store"
	"github.com/agentfleet/agentfleet/store/postgres"
	"github.com/agentfleet/agentfleet/store/sqlite"
)

// OpenStore opens the store a database URL names, the same way in every
// command: Postgres for postgres:// URLs and libpq key=value strings, SQLite
// for sqlite:, sqlite://, file: URLs and plain file paths.
func OpenStore(ctx context.Context, url string) (store.Store, error) {
	if path, ok := SQLitePath(url); ok {
		if path == "" {
			return nil, fmt.Errorf("database URL %q names no SQLite file", url)
		}
		s, err := sqlite.Open(ctx, sqlite.Config{Path: path})
		if err != nil {
			return nil, fmt.Errorf("open SQLite store %s: %w", path, err)
		}
		return s, nil
	}
	s, err := postgres.Open(ctx, postgres.Config{DSN: url})
	if err != nil {
		return nil, fmt.Errorf("open Postgres store: %w", err)
	}
	if err := s.CheckSchema(ctx); err != nil {
		_ = s.Close()
		return nil, fmt.Errorf("open Postgres store: %w", err)
	}
	return s, nil
}

// OpenStoreWaiting is OpenStore that, while the store does not answer (a
// database starting with the fleet, or restarting), tries again with a
// growing pause for up to wait (0: queue.DefaultStartupWait; negative: no
// retry), logging what it waits for. A store that answers and refuses
// (no schema, bad credentials) fails at once.
func OpenStoreWaiting(ctx context.Context, url string, wait time.Duration, log *slog.Logger) (store.Store, error) {
	if wait == 0 {
		wait = queue.DefaultStartupWait
	}
	deadline, delay := time.Now().Add(wait), 250*time.Millisecond
	for {
		s, err := OpenStore(ctx, url)
		if err == nil || !store.IsRetryable(err) || wait < 0 || time.Now().Add(delay).After(deadline) {
			return s, err
		}
		log.Warn("waiting for the store to answer", "err", err, "retry_in", delay, "gives_up_at", deadline.Format(time.RFC3339))
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(delay):
		}
		delay = min(2*delay, 5*time.Second)
	}
}

// SQLitePath reports whether url names a SQLite database, and its file path.
func SQLitePath(url string) (string, bool) {
	for _, prefix := range []string{"sqlite://", "sqlite3://", "sqlite:", "file:"} {
		if after, ok := strings.CutPrefix(url, prefix); ok {
			path, _, _ := strings.Cut(after, "?")
			return path, true
		}
	}
	if strings.HasPrefix(url, "postgres://") || strings.HasPrefix(url, "postgresql://") || strings.Contains(url, "=") {
		return "", false
	}
	return url, true // a plain path
}
