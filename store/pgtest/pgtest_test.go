package pgtest_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/agentfleet/agentfleet/store/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func TestNewDatabaseIsMigratedAndIsolated(t *testing.T) {
	a, b := pgtest.NewDatabase(t), pgtest.NewDatabase(t)
	if a == b {
		t.Fatalf("two tests got the same database %s", a)
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close(ctx) }()
	var n int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM tasks`).Scan(&n); err != nil {
		t.Fatalf("the tasks table is missing in a fresh database: %v", err)
	}
	if n != 0 {
		t.Fatalf("fresh database has %d tasks", n)
	}
	t.Logf("server source: %s", pgtest.Source(t))
}
