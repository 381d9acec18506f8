package postgres_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/agentfleet/agentfleet/internal/testenv"
	"github.com/agentfleet/agentfleet/store"
)

// A running task's heartbeat changes no indexed column (migration 00008),
// so Postgres writes it as a HOT update: no index entry, the row's new
// version on its page. Every heartbeat here is one; with heartbeat_at
// indexed none was.
func TestHeartbeatsAreHOTUpdates(t *testing.T) {
	ctx, s, dsn := newStore(t)
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

	conn := connect(ctx, t, dsn)
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
