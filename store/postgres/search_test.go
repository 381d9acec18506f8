package postgres_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentfleet/agentfleet/store"
	"github.com/agentfleet/agentfleet/store/pgtest"
	"github.com/agentfleet/agentfleet/store/postgres"
)

// The search vectors live in task_search, and the trigger keeps the
// prompt's part of a vector when an update leaves the spec alone (migration
// 00007): after every kind of update each task has its vector and it equals
// the one computed from scratch, lexemes, weights and positions, or phrase
// search would find other tasks. An update that changes none of the
// searched columns (a claim) does not write the vector, and deleting a task
// deletes it.
func TestSearchVectorEqualsTheFullComputation(t *testing.T) {
	ctx, s, dsn := newStore(t)
	conn := connect(ctx, t, dsn)

	long := strings.Repeat("router linter ", 400) // over 256 positions of one lexeme
	prompts := []string{"", "Fix the failing linter in pkg/router", "linter linter, the LINTER!", long,
		"deploy staging then summarise the week's migrations"}
	for _, p := range prompts {
		spec, _ := json.Marshal(map[string]string{"prompt": p})
		if _, err := s.CreateTask(ctx, store.CreateTaskParams{Spec: spec}); err != nil {
			t.Fatal(err)
		}
	}
	updates := []string{
		`UPDATE tasks SET state = 'running', worker_id = 'w1'`,                                 // touches neither part
		`UPDATE tasks SET result = '{"final_text":"The failing linter was renumbered"}'`,       // an answer
		`UPDATE tasks SET error = 'budget exhausted: linter loop in router'`,                   // a reason beside it
		`UPDATE tasks SET result = '{"final_text":"` + long + `"}', error = ''`,                // replaced, cleared
		`UPDATE tasks SET result = NULL`,                                                       // reopened
		`UPDATE tasks SET spec = jsonb_set(spec, '{prompt}', '"a new prompt about linters"')`,  // the prompt itself
		`UPDATE tasks SET result = '{"final_text":"linters"}', error = 'staging week staging'`, // after the new prompt
	}
	for i, u := range updates {
		before := vectorVersions(ctx, t, conn)
		if _, err := conn.Exec(ctx, u); err != nil {
			t.Fatalf("%s: %v", u, err)
		}
		var differ, missing int
		if err := conn.QueryRow(ctx, `SELECT
			count(*) FILTER (WHERE s.search IS DISTINCT FROM `+fullVector+`),
			count(*) FILTER (WHERE s.task_id IS NULL)
			FROM tasks t LEFT JOIN task_search s ON s.task_id = t.id`).Scan(&differ, &missing); err != nil {
			t.Fatal(err)
		}
		if differ != 0 || missing != 0 {
			t.Fatalf("after %s: %d vectors differ from the full computation, %d tasks have none", u, differ, missing)
		}
		if after := vectorVersions(ctx, t, conn); i == 0 && after != before {
			t.Fatalf("a claim wrote the vectors again (row versions %q, then %q)", before, after)
		}
	}
	if _, err := conn.Exec(ctx, `DELETE FROM tasks`); err != nil {
		t.Fatal(err)
	}
	var left int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM task_search`).Scan(&left); err != nil || left != 0 {
		t.Fatalf("%d vectors left after their tasks were deleted (%v)", left, err)
	}
}

// vectorVersions lists the row versions (xmin) of task_search: a row
// written again has another.
func vectorVersions(ctx context.Context, t *testing.T, conn *pgx.Conn) string {
	t.Helper()
	var v string
	if err := conn.QueryRow(ctx, `SELECT coalesce(string_agg(xmin::text, ',' ORDER BY task_id), '') FROM task_search`).Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// newStore opens a store on a new migrated database and returns it with
// its DSN and a context for the test; both end with the test.
func newStore(t *testing.T) (context.Context, *postgres.Store, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	dsn := pgtest.NewDatabase(t)
	s, err := postgres.Open(ctx, postgres.Config{DSN: dsn})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return ctx, s, dsn
}

// connect opens a plain connection to dsn, closed with the test.
func connect(ctx context.Context, t *testing.T, dsn string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	return conn
}

// fullVector is the search vector of a tasks row t computed from scratch,
// as migration 00005 first defined it: each part parsed, none kept.
const fullVector = `setweight(to_tsvector('english', left(coalesce(t.spec ->> 'prompt', ''), 100000)), 'A') ||
	setweight(to_tsvector('english', left(coalesce(t.result ->> 'final_text', ''), 100000)), 'B') ||
	setweight(to_tsvector('english', left(coalesce(t.error, ''), 100000)), 'C')`
