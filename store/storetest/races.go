package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/store"
)

// race runs f(i) in n goroutines released together and returns their errors.
func race(n int, f func(i int) error) []error {
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			errs[i] = f(i)
		})
	}
	close(start)
	wg.Wait()
	return errs
}

var raceTests = map[string]func(*testing.T, *bundle){
	"TwentyClaimOneTask": func(t *testing.T, b *bundle) {
		task := b.task(t, store.CreateTaskParams{})
		var mu sync.Mutex
		winners := []string{}
		errs := race(20, func(i int) error {
			worker := fmt.Sprintf("w%d", i)
			_, err := b.s.ClaimTask(b.ctx, store.ClaimTaskParams{ID: task.ID, WorkerID: worker})
			if err == nil {
				mu.Lock()
				winners = append(winners, worker)
				mu.Unlock()
			}
			return err
		})
		for _, err := range errs {
			if err != nil && !errors.Is(err, store.ErrConflict) {
				t.Fatalf("a losing claim failed with %v, want ErrConflict", err)
			}
		}
		if len(winners) != 1 {
			t.Fatalf("%d claims won (%v), want exactly one", len(winners), winners)
		}
		if got := b.get(t, task.ID); got.WorkerID != winners[0] || got.Attempts != 1 {
			t.Fatalf("task after the race: worker %q attempts %d, want %q and 1", got.WorkerID, got.Attempts, winners[0])
		}
	},
	"TwentyAppendToTheirSessions": func(t *testing.T, b *bundle) {
		task := b.task(t, store.CreateTaskParams{})
		sessions := make([]uuid.UUID, 20)
		for i := range sessions {
			sessions[i] = b.session(t, task.ID).ID
		}
		const batches, per = 5, 4
		errs := race(20, func(i int) error {
			for k := range batches {
				_, err := b.s.AppendTurns(b.ctx, store.AppendTurnsParams{SessionID: sessions[i],
					Turns: turns(int64(k*per+1), per), AddUsage: store.Usage{OutputTokens: 1}})
				if err != nil {
					return err
				}
			}
			return nil
		})
		for i, err := range errs {
			if err != nil {
				t.Fatalf("session %d: %v", i, err)
			}
		}
		for _, id := range sessions {
			gapless(t, b.load(t, id), batches*per)
			if s, _ := b.s.GetSession(b.ctx, store.GetSessionParams{ID: id}); s.Usage.OutputTokens != batches {
				t.Fatalf("session usage = %+v, want %d output tokens", s.Usage, batches)
			}
		}
	},
	"TwentyAppendTheSameSeq": func(t *testing.T, b *bundle) {
		s := b.session(t, b.task(t, store.CreateTaskParams{}).ID)
		errs := race(20, func(int) error {
			_, err := b.s.AppendTurns(b.ctx, store.AppendTurnsParams{SessionID: s.ID, Turns: turns(1, 2)})
			return err
		})
		won := 0
		for _, err := range errs {
			switch {
			case err == nil:
				won++
			case !errors.Is(err, store.ErrConflict):
				t.Fatalf("a losing append failed with %v, want ErrConflict", err)
			}
		}
		if won != 1 {
			t.Fatalf("%d appends of seq 1-2 won, want exactly one", won)
		}
		gapless(t, b.load(t, s.ID), 2)
	},
	"CancelWhileClaiming": func(t *testing.T, b *bundle) {
		f := b.family(t)
		errs := race(2, func(i int) error {
			if i == 0 {
				_, err := b.s.CancelSubtree(b.ctx, store.CancelSubtreeParams{ID: f.root.ID})
				return err
			}
			_, err := b.s.ClaimTask(b.ctx, store.ClaimTaskParams{ID: f.a1.ID, WorkerID: "w9"})
			if errors.Is(err, store.ErrConflict) {
				return nil // cancelled first
			}
			return err
		})
		for _, err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		if a1 := b.get(t, f.a1.ID); a1.State != store.TaskCancelled {
			t.Fatalf("a task claimed during a subtree cancel ended %s, want cancelled", a1.State)
		}
	},
}
