package main

import (
	"context"
	"fmt"

	"github.com/agentfleet/agentfleet/store"
	"github.com/agentfleet/agentfleet/store/postgres"
	"github.com/agentfleet/agentfleet/store/sqlite"
)

// openStore opens the store a database URL names: Postgres for
// postgres:// URLs and libpq strings, SQLite for file paths (see migrate).
func openStore(ctx context.Context, url string) (store.Store, error) {
	if path, ok := sqlitePath(url); ok {
		if path == "" {
			return nil, fmt.Errorf("database URL %q names no SQLite file", url)
		}
		s, err := sqlite.Open(ctx, sqlite.Config{Path: path})
		if err != nil {
			return nil, fmt.Errorf("open SQLite store %s: %w", path, err)
		}
		return s, nil
	}
	s, err := postgres.New(ctx, postgres.Config{DSN: url})
	if err != nil {
		return nil, fmt.Errorf("open Postgres store: %w (run `dispatcher migrate up` first)", err)
	}
	return s, nil
}
