package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/store"
)

var drivers = []struct {
	name string
	open func(testing.TB) store.Store
}{{"postgres", openPostgres}, {"sqlite", openSQLite}}

// kilobyteTurn is a 1 KB assistant turn.
var kilobyteTurn = json.RawMessage(`{"role":"assistant","text":"` + strings.Repeat("x", 1000) + `"}`)

func benchSessions(b *testing.B, s store.Store, n int) []uuid.UUID {
	ctx := context.Background()
	task, err := s.CreateTask(ctx, store.CreateTaskParams{Spec: json.RawMessage(`{}`)})
	if err != nil {
		b.Fatal(err)
	}
	out := make([]uuid.UUID, n)
	for i := range out {
		sess, err := s.CreateSession(ctx, store.CreateSessionParams{TaskID: task.Task.ID})
		if err != nil {
			b.Fatal(err)
		}
		out[i] = sess.ID
	}
	return out
}

// BenchmarkAppendTurns: 64 sessions append 1 KB turns concurrently, one turn
// per call (a checkpoint per turn, as the agent loop writes them).
func BenchmarkAppendTurns(b *testing.B) {
	for _, d := range drivers {
		b.Run(d.name, func(b *testing.B) {
			s := d.open(b)
			sessions := benchSessions(b, s, 64)
			var next atomic.Int64
			var wg sync.WaitGroup
			errs := make(chan error, len(sessions))
			b.ResetTimer()
			start := time.Now()
			for _, id := range sessions {
				wg.Go(func() {
					for seq := int64(1); next.Add(1) <= int64(b.N); seq++ {
						_, err := s.AppendTurns(context.Background(), store.AppendTurnsParams{SessionID: id,
							Turns: []store.NewTurn{{Seq: seq, Kind: "assistant", Payload: kilobyteTurn}}})
						if err != nil {
							errs <- err
							return
						}
					}
				})
			}
			wg.Wait()
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "turns/s")
			close(errs)
			for err := range errs {
				b.Fatal(err)
			}
		})
	}
}

// BenchmarkLoadHistory loads a 1,000-turn history of 1 KB turns.
func BenchmarkLoadHistory(b *testing.B) {
	for _, d := range drivers {
		b.Run(d.name, func(b *testing.B) {
			s := d.open(b)
			id := benchSessions(b, s, 1)[0]
			ctx := context.Background()
			for first := int64(1); first <= 1000; first += 100 {
				batch := make([]store.NewTurn, 100)
				for i := range batch {
					batch[i] = store.NewTurn{Seq: first + int64(i), Kind: "assistant", Payload: kilobyteTurn}
				}
				if _, err := s.AppendTurns(ctx, store.AppendTurnsParams{SessionID: id, Turns: batch}); err != nil {
					b.Fatal(err)
				}
			}
			b.ResetTimer()
			for range b.N {
				turns, err := s.LoadTurns(ctx, store.LoadTurnsParams{SessionID: id})
				if err != nil || len(turns) != 1000 {
					b.Fatalf("loaded %d turns: %v", len(turns), err)
				}
			}
		})
	}
}

// BenchmarkClaimContention: 16 workers race to claim each of b.N queued
// tasks; exactly one claim per task wins.
func BenchmarkClaimContention(b *testing.B) {
	const workers = 16
	for _, d := range drivers {
		b.Run(d.name, func(b *testing.B) {
			s := d.open(b)
			ctx := context.Background()
			ids := make([]uuid.UUID, 0, b.N)
			for len(ids) < b.N {
				n := min(1000, b.N-len(ids))
				p := store.CreateTasksParams{Tasks: make([]store.CreateTaskParams, n)}
				for i := range p.Tasks {
					p.Tasks[i].Spec = json.RawMessage(`{}`)
				}
				res, err := s.CreateTasks(ctx, p)
				if err != nil {
					b.Fatal(err)
				}
				for _, r := range res {
					ids = append(ids, r.Task.ID)
				}
			}
			var won, attempts atomic.Int64
			var wg sync.WaitGroup
			b.ResetTimer()
			start := time.Now()
			for w := range workers {
				wg.Go(func() {
					for _, id := range ids {
						attempts.Add(1)
						if _, err := s.ClaimTask(ctx, store.ClaimTaskParams{ID: id, WorkerID: fmt.Sprint("w", w)}); err == nil {
							won.Add(1)
						}
					}
				})
			}
			wg.Wait()
			elapsed := time.Since(start).Seconds()
			b.StopTimer()
			if won.Load() != int64(b.N) {
				b.Fatalf("%d claims won for %d tasks", won.Load(), b.N)
			}
			b.ReportMetric(float64(won.Load())/elapsed, "claims/s")
			b.ReportMetric(float64(attempts.Load())/elapsed, "attempts/s")
		})
	}
}

// BenchmarkCreateTasks: batches of 1000 tasks with idempotency keys, as the
// dispatcher stores a submitted batch; reports tasks/s.
func BenchmarkCreateTasks(b *testing.B) {
	for _, d := range drivers {
		b.Run(d.name, func(b *testing.B) {
			s := d.open(b)
			b.ResetTimer()
			for n := range b.N {
				batch := make([]store.CreateTaskParams, 1000)
				for i := range batch {
					batch[i] = store.CreateTaskParams{Spec: json.RawMessage(`{"prompt":"bench task","profile":"anthropic"}`),
						IdempotencyKey: fmt.Sprintf("k-%d-%d", n, i), Labels: map[string]string{"bench": "b"}}
				}
				if _, err := s.CreateTasks(context.Background(), store.CreateTasksParams{Tasks: batch}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*1000)/b.Elapsed().Seconds(), "tasks/s")
		})
	}
}
