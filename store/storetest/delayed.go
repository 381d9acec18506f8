package storetest

import (
	"testing"
	"time"

	"github.com/google/uuid"
)

// delayedTests check the delayed starts of run_at: listed when due,
// earliest first and bounded, replaced by a second put, dropped by
// delete (twice is fine).
var delayedTests = map[string]func(*testing.T, *bundle){
	"DueReplaceDelete": func(t *testing.T, b *bundle) {
		at := time.Date(2026, 11, 27, 3, 0, 0, 0, time.UTC)
		early, late, far := uuid.New(), uuid.New(), uuid.New()
		for id, when := range map[uuid.UUID]time.Time{early: at, late: at.Add(time.Minute), far: at.Add(time.Hour)} {
			if err := b.s.PutDelayedStart(b.ctx, id, when); err != nil {
				t.Fatal(err)
			}
		}
		due, err := b.s.DueDelayedStarts(b.ctx, at.Add(time.Minute), 0)
		if err != nil || len(due) != 2 || due[0].TaskID != early || !due[0].RunAt.Equal(at) || due[1].TaskID != late {
			t.Fatalf("due at +1m: %+v, %v; want early then late", due, err)
		}
		if due, err := b.s.DueDelayedStarts(b.ctx, at.Add(time.Hour), 1); err != nil || len(due) != 1 || due[0].TaskID != early {
			t.Fatalf("limit 1: %+v, %v", due, err)
		}
		if err := b.s.PutDelayedStart(b.ctx, early, at.Add(2*time.Hour)); err != nil {
			t.Fatal(err)
		}
		if err := b.s.DeleteDelayedStart(b.ctx, late); err != nil {
			t.Fatal(err)
		}
		if err := b.s.DeleteDelayedStart(b.ctx, late); err != nil {
			t.Fatalf("a second delete: %v", err)
		}
		due, err = b.s.DueDelayedStarts(b.ctx, at.Add(time.Hour), 0)
		if err != nil || len(due) != 1 || due[0].TaskID != far {
			t.Fatalf("after the replace and the delete: %+v, %v; want only far", due, err)
		}
	},
}
