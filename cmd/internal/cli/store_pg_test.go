package cli

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentfleet/agentfleet/store/pgtest"
	"github.com/agentfleet/agentfleet/store/postgres"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// The migrate hint is given when the database has no schema, and only
// then: a database that does not answer is waited for, not blamed on a
// missing migration.
func TestOpenStoreSaysMigrateOnlyWithoutSchema(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := OpenStore(ctx, pgtest.NewEmptyDatabase(t)); !errors.Is(err, postgres.ErrNoSchema) || !strings.Contains(err.Error(), "migrate up") {
		t.Fatalf("an empty database: %v; want the migrate hint", err)
	}
	s, err := OpenStore(ctx, pgtest.NewDatabase(t))
	if err != nil {
		t.Fatalf("a migrated database: %v", err)
	}
	_ = s.Close()
}

// A store that is down at start is waited for: the program comes up once
// Postgres does, instead of exiting at once.
func TestOpenStoreWaitsForAStoreStartingLate(t *testing.T) {
	pg, dsn := pgtest.NewClusterWithDatabase(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	pg.Stop()
	// Postgres comes back once the first wait is logged.
	var once sync.Once
	started := make(chan struct{})
	log := slog.New(onRecord{Handler: slog.DiscardHandler, f: func() {
		once.Do(func() {
			go func() {
				defer close(started)
				if err := pg.Start(ctx); err != nil {
					t.Error(err)
				}
			}()
		})
	}})
	s, err := OpenStoreWaiting(ctx, dsn, time.Minute, log)
	if err != nil {
		t.Fatalf("a store that came up while the program waited: %v", err)
	}
	_ = s.Close()
	select { // the wait was logged (which started Postgres)
	case <-started:
	case <-time.After(time.Minute):
		t.Fatal("the store opened while Postgres was down, without a wait")
	}
}

// onRecord calls f for every record, at every level.
type onRecord struct {
	slog.Handler
	f func()
}

func (h onRecord) Enabled(context.Context, slog.Level) bool { return true }

func (h onRecord) Handle(ctx context.Context, r slog.Record) error {
	h.f()
	return h.Handler.Handle(ctx, r)
}
