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

// The search trigger keeps the prompt's part of the vector when an update
// leaves the spec alone (migration 00007): after every kind of update the
// stored vector must equal the one computed from scratch, lexemes, weights
// and positions, or phrase search would find other tasks.
func TestSearchVectorEqualsTheFullComputation(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dsn := pgtest.NewDatabase(t)
	s, err := postgres.Open(ctx, postgres.Config{DSN: dsn})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close(ctx) }()

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
	for _, u := range updates {
		if _, err := conn.Exec(ctx, u); err != nil {
			t.Fatalf("%s: %v", u, err)
		}
		var differ, empty int
		if err := conn.QueryRow(ctx, `SELECT
			count(*) FILTER (WHERE search IS DISTINCT FROM tasks_search_vector(spec, result, error)),
			count(*) FILTER (WHERE search IS NULL)
			FROM tasks`).Scan(&differ, &empty); err != nil {
			t.Fatal(err)
		}
		if differ != 0 || empty != 0 {
			t.Fatalf("after %s: %d vectors differ from the full computation, %d are null", u, differ, empty)
		}
	}
}
