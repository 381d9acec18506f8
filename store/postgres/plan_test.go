package postgres_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/internal/testenv"
	"github.com/agentfleet/agentfleet/store"
)

// A running task's own writes find its row by primary key even when the
// table's statistics say almost no task is running, as they do after a
// backlog was submitted and analyzed before the workers took it. Planned
// from such statistics, `id = $1 AND state = 'running'` could go through
// tasks_state_created_idx instead, reading the entry of every running
// task to find one: each heartbeat, append and end O(running tasks).
func TestRunningTaskWritesProbeThePrimaryKey(t *testing.T) {
	ctx, s, dsn := newStore(t)
	const tasks = 400
	ids := make([]uuid.UUID, 0, tasks)
	for range tasks {
		res, err := s.CreateTask(ctx, store.CreateTaskParams{Spec: json.RawMessage(`{"prompt":"plan"}`)})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, res.Task.ID)
	}
	conn := connect(ctx, t, dsn)
	if _, err := conn.Exec(ctx, `ANALYZE tasks`); err != nil { // every task queued
		t.Fatal(err)
	}
	for _, id := range ids {
		if _, err := s.ClaimTask(ctx, store.ClaimTaskParams{ID: id, WorkerID: "w1"}); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range ids {
		if _, err := s.HeartbeatTask(ctx, store.HeartbeatTaskParams{ID: id, WorkerID: "w1"}); err != nil {
			t.Fatal(err)
		}
		_, err := s.TransitionTask(ctx, store.TransitionTaskParams{ID: id, From: store.TaskRunning,
			To: store.TaskSucceeded, WorkerID: "w1", Result: json.RawMessage(`{"final_text":"done"}`)})
		if err != nil {
			t.Fatal(err)
		}
	}
	_ = s.Close() // its sessions end, which reports their statistics

	var ended int64
	testenv.Eventually(t, 30*time.Second, "the store's sessions to report their updates", func() bool {
		err := conn.QueryRow(ctx, `SELECT n_tup_upd FROM pg_stat_user_tables WHERE relname = 'tasks'`).Scan(&ended)
		_, _ = conn.Exec(ctx, `SELECT pg_stat_clear_snapshot()`)
		return err == nil && ended >= 3*tasks
	})
	var scans int64
	err := conn.QueryRow(ctx, `SELECT idx_scan FROM pg_stat_user_indexes WHERE indexrelname = 'tasks_state_created_idx'`).Scan(&scans)
	if err != nil {
		t.Fatal(err)
	}
	if scans != 0 {
		t.Fatalf("%d claims, heartbeats and ends scanned tasks_state_created_idx; want every one by primary key", scans)
	}
}
