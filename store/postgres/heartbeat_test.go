package postgres_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentfleet/agentfleet/internal/testenv"
	"github.com/agentfleet/agentfleet/store"
	"github.com/agentfleet/agentfleet/store/pgtest"
	"github.com/agentfleet/agentfleet/store/postgres"
)

// A running task's heartbeat changes no indexed column (migration 00008),
// so Postgres writes it as a HOT update: no index entry, the row's new
// version on its page. Every heartbeat here is one; with heartbeat_at
// indexed none was.
func TestHeartbeatsAreHOTUpdates(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dsn := pgtest.NewDatabase(t)
	s, err := postgres.Open(ctx, postgres.Config{DSN: dsn})
	if err != nil {
		t.Fatal(err)
	}
	const tasks, beats = 3, 10
	for range tasks {
		res, err := s.CreateTask(ctx, store.CreateTaskParams{Spec: json.RawMessage(`{"prompt":"beat"}`)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.ClaimTask(ctx, store.ClaimTaskParams{ID: res.Task.ID, WorkerID: "w1"}); err != nil {
			t.Fatal(err)
		}
		for range beats {
			if _, err := s.HeartbeatTask(ctx, store.HeartbeatTaskParams{ID: res.Task.ID, WorkerID: "w1"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	_ = s.Close() // its sessions end, which reports their statistics

	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close(ctx) }()
	var updates, hot int64
	testenv.Eventually(t, 30*time.Second, "the store's sessions to report their updates", func() bool {
		err := conn.QueryRow(ctx, `SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables WHERE relname = 'tasks'`).Scan(&updates, &hot)
		_, _ = conn.Exec(ctx, `SELECT pg_stat_clear_snapshot()`)
		return err == nil && updates >= tasks*(1+beats)
	})
	if hot < tasks*beats {
		t.Fatalf("%d of %d updates were HOT; want every one of the %d heartbeats", hot, updates, tasks*beats)
	}
}
