package migrations_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentfleet/agentfleet/migrations"
	"github.com/agentfleet/agentfleet/store/pgtest"
	"github.com/agentfleet/agentfleet/store/postgres"
	"github.com/agentfleet/agentfleet/store/sqlite"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// upDownUp migrates up, all the way down and up again, checking the tables
// each time.
func upDownUp(t *testing.T, db *sql.DB, d migrations.Dialect) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	tables := func() int {
		t.Helper()
		var n int
		for _, table := range []string{"tasks", "sessions", "turns", "tool_outputs", "artifacts"} {
			if _, err := db.ExecContext(ctx, "SELECT count(*) FROM "+table); err == nil {
				n++
			}
		}
		return n
	}
	for round := 1; round <= 2; round++ {
		res, err := migrations.Up(ctx, db, d)
		if err != nil {
			t.Fatalf("up (round %d): %v", round, err)
		}
		if len(res) == 0 || tables() != 5 {
			t.Fatalf("up (round %d) applied %d migrations, %d of 5 tables exist", round, len(res), tables())
		}
		st, err := migrations.List(ctx, db, d)
		if err != nil || len(st) == 0 || !st[len(st)-1].Applied {
			t.Fatalf("status after up: %+v, %v", st, err)
		}
		if again, err := migrations.Up(ctx, db, d); err != nil || len(again) != 0 {
			t.Fatalf("a second up applied %d migrations, %v", len(again), err)
		}
		if round == 2 {
			break
		}
		if _, err := migrations.DownTo(ctx, db, d, 0); err != nil {
			t.Fatalf("down: %v", err)
		}
		if n := tables(); n != 0 {
			t.Fatalf("after down %d tables remain", n)
		}
		st, err = migrations.List(ctx, db, d)
		if err != nil || st[0].Applied {
			t.Fatalf("status after down: %+v, %v", st, err)
		}
	}
	// Down one step at a time from the top, then nothing left to roll back.
	st, err := migrations.List(ctx, db, d)
	if err != nil {
		t.Fatal(err)
	}
	for range st {
		if res, err := migrations.Down(ctx, db, d); err != nil || len(res) != 1 {
			t.Fatalf("down one: %+v, %v", res, err)
		}
	}
	if res, err := migrations.Down(ctx, db, d); err != nil || len(res) != 0 {
		t.Fatalf("down with nothing applied: %+v, %v", res, err)
	}
}

func TestUpDownUpPostgres(t *testing.T) {
	db, err := postgres.OpenDB(pgtest.NewEmptyDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	upDownUp(t, db, migrations.Postgres)
}

func TestUpDownUpSQLite(t *testing.T) {
	db, err := sqlite.OpenDB(filepath.Join(t.TempDir(), "m.db"), 5*time.Second, false)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	db.SetMaxOpenConns(1)
	upDownUp(t, db, migrations.SQLite)
}

func TestUnknownDialect(t *testing.T) {
	if _, err := migrations.Up(context.Background(), nil, "oracle"); err == nil {
		t.Fatal("an unknown dialect was accepted")
	}
}
