package store_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/agentfleet/agentfleet/store"
	"github.com/agentfleet/agentfleet/store/pgtest"
	"github.com/agentfleet/agentfleet/store/postgres"
	"github.com/agentfleet/agentfleet/store/sqlite"
	"github.com/agentfleet/agentfleet/store/storetest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func newPostgres(t *testing.T) store.Store { return openPostgres(t) }

func newSQLite(t *testing.T) store.Store { return openSQLite(t) }

func openPostgres(t testing.TB) store.Store {
	s, err := postgres.Open(context.Background(), postgres.Config{DSN: pgtest.NewDatabase(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func openSQLite(t testing.TB) store.Store {
	s, err := sqlite.Open(context.Background(), sqlite.Config{Path: filepath.Join(t.TempDir(), "agentfleet.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestStore(t *testing.T) {
	t.Run("postgres", func(t *testing.T) { storetest.Exercise(t, newPostgres) })
	t.Run("sqlite", func(t *testing.T) { storetest.Exercise(t, newSQLite) })
}
