package postgres_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentfleet/agentfleet/store"
	"github.com/agentfleet/agentfleet/store/pgtest"
	"github.com/agentfleet/agentfleet/store/postgres"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// restartBundle is a store on a private cluster that the test restarts.
type restartBundle struct {
	cluster *pgtest.Cluster
	s       *postgres.Store
	session store.Session
	ctx     context.Context
}

func setupRestart(t *testing.T) *restartBundle {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	c := pgtest.NewCluster(t)
	conn, err := pgx.Connect(ctx, c.DSN("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "CREATE DATABASE app"); err != nil {
		t.Fatal(err)
	}
	_ = conn.Close(ctx)
	if err := postgres.Migrate(ctx, c.DSN("app")); err != nil {
		t.Fatal(err)
	}
	s, err := postgres.Open(ctx, postgres.Config{DSN: c.DSN("app")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	task, err := s.CreateTask(ctx, store.CreateTaskParams{Spec: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	sess, err := s.CreateSession(ctx, store.CreateSessionParams{TaskID: task.Task.ID})
	if err != nil {
		t.Fatal(err)
	}
	return &restartBundle{cluster: c, s: s, session: sess, ctx: ctx}
}

func batch(first int64, n int) []store.NewTurn {
	out := make([]store.NewTurn, n)
	for i := range out {
		out[i] = store.NewTurn{Seq: first + int64(i), Kind: "assistant", Payload: json.RawMessage(fmt.Sprintf(`{"n":%d}`, first+int64(i)))}
	}
	return out
}

// appendRetrying appends a batch, retrying retryable errors until deadline.
// A conflict after a failed attempt means the attempt did land (the
// connection broke during commit); the session's LastSeq decides.
func (b *restartBundle) appendRetrying(first int64, n int) (retries int, err error) {
	deadline := time.Now().Add(60 * time.Second)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		_, err = b.s.AppendTurns(b.ctx, store.AppendTurnsParams{SessionID: b.session.ID, Turns: batch(first, n)})
		switch {
		case err == nil:
			return retries, nil
		case errors.Is(err, store.ErrConflict) && retries > 0:
			sess, gerr := b.s.GetSession(b.ctx, store.GetSessionParams{ID: b.session.ID})
			if gerr == nil && sess.LastSeq == first+int64(n)-1 {
				return retries, nil
			}
			return retries, fmt.Errorf("conflict after a retry, but the session ends at seq %d: %w", sess.LastSeq, err)
		case !store.IsRetryable(err):
			return retries, fmt.Errorf("append of seq %d failed with a non-retryable error: %w", first, err)
		case time.Now().After(deadline):
			return retries, fmt.Errorf("still failing after 60 s: %w", err)
		}
		retries++
		<-tick.C
	}
}

func (b *restartBundle) mustAppend(t *testing.T, first int64, n int) {
	t.Helper()
	if _, err := b.appendRetrying(first, n); err != nil {
		t.Fatal(err)
	}
}

func (b *restartBundle) wantHistory(t *testing.T, n int) {
	t.Helper()
	turns, err := b.s.LoadTurns(b.ctx, store.LoadTurnsParams{SessionID: b.session.ID})
	if err != nil {
		t.Fatal(err)
	}
	if len(turns) != n {
		t.Fatalf("history has %d turns, want %d", len(turns), n)
	}
	for i, tr := range turns {
		if tr.Seq != int64(i+1) || string(tr.Payload) != fmt.Sprintf(`{"n":%d}`, i+1) {
			t.Fatalf("turn %d is seq %d %s", i, tr.Seq, tr.Payload)
		}
	}
}

// TestServerDown: calls while the server is down fail with a retryable
// error and write nothing; after it is back, the pool reconnects.
func TestServerDown(t *testing.T) {
	b := setupRestart(t)
	b.mustAppend(t, 1, 3)
	b.cluster.Stop()
	_, err := b.s.AppendTurns(b.ctx, store.AppendTurnsParams{SessionID: b.session.ID, Turns: batch(4, 3)})
	if !store.IsRetryable(err) {
		t.Fatalf("append with the server down: %v, want a retryable error", err)
	}
	_, err = b.s.CreateTasks(b.ctx, store.CreateTasksParams{Tasks: []store.CreateTaskParams{{Spec: []byte(`{}`)}, {Spec: []byte(`{}`)}}})
	if !store.IsRetryable(err) {
		t.Fatalf("create with the server down: %v, want a retryable error", err)
	}
	if err := b.cluster.Start(b.ctx); err != nil {
		t.Fatal(err)
	}
	b.mustAppend(t, 4, 3)
	b.wantHistory(t, 6)
	counts, err := b.s.CountTasks(b.ctx, store.CountTasksParams{})
	if err != nil || counts[store.TaskQueued] != 1 {
		t.Fatalf("tasks after the outage: %v, %v (the failed batch must not be half-written)", counts, err)
	}
}

// TestRestartMidRun restarts the server while a session appends turns
// continuously: every error is retryable, and the history ends gapless with
// each turn once.
func TestRestartMidRun(t *testing.T) {
	b := setupRestart(t)
	const batches, per = 60, 2
	progress := make(chan int64, batches)
	type outcome struct {
		retries int
		err     error
	}
	done := make(chan outcome, 1)
	go func() {
		var o outcome
		for k := 0; k < batches && o.err == nil; k++ {
			var r int
			r, o.err = b.appendRetrying(int64(k*per+1), per)
			o.retries += r
			progress <- int64(k)
		}
		done <- o
	}()
	for k := range progress {
		if k == 10 {
			break
		}
	}
	if err := b.cluster.Restart(b.ctx); err != nil {
		t.Fatal(err)
	}
	var o outcome
	for finished := false; !finished; {
		select {
		case <-progress:
		case o = <-done:
			finished = true
		case <-b.ctx.Done():
			t.Fatal("the appender did not finish")
		}
	}
	if o.err != nil {
		t.Fatal(o.err)
	}
	t.Logf("%d retried appends across the restart", o.retries)
	b.wantHistory(t, batches*per)
	if err := b.s.Ping(b.ctx); err != nil {
		t.Fatalf("the pool did not reconnect: %v", err)
	}
}
