package bench

import (
	"context"
	"testing"
)

// TestStallRate: a share of the bench's tasks stall (one identical call
// round after round); the watchdog stops every one of them as no_progress
// within its default window (8 rounds, then 4 more, after the first
// call), the others succeed, and the report says so.
func TestStallRate(t *testing.T) {
	st, dir := benchSQLite(t)
	rep, err := Run(context.Background(), Config{Tasks: 10, Workers: 1, Rounds: 4, StallRate: 0.3,
		Store: st, StoreName: "sqlite", Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if rep.StalledTasks != 3 || rep.NoProgressStopped != 3 || rep.Succeeded != 7 || rep.Unexpected() != 0 || rep.FirstError != "" {
		t.Fatalf("report %+v; want 3 stalled tasks stopped as no_progress and 7 successes", rep)
	}
	if rep.MaxTurnsStalled > 1+8+4 || rep.TurnsSpentStalled < 9 {
		t.Fatalf("stalled tasks spent %.1f turns on average, at most %d; want each stopped after 9 to 13", rep.TurnsSpentStalled, rep.MaxTurnsStalled)
	}
	if err := (Config{StallRate: 1.5}).WithDefaults().Validate(); err == nil {
		t.Fatal("a stall rate of 1.5 was accepted")
	}
	for i, want := range []bool{false, false, false, true, false, false, true, false, false, true} {
		if stalls(i, 0.3) != want {
			t.Fatalf("stalls(%d, 0.3) = %v", i, !want)
		}
	}
}
