package cli

import (
	"context"
	"fmt"
	"strings"

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
		return nil, fmt.Errorf("open Postgres store: %w (run `dispatcher migrate up` first)", err)
	}
	return s, nil
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
