package bench

import (
	"context"
	"testing"
	"time"

	"github.com/agentfleet/agentfleet/fleet/fleettest"
)

// TestBenchContextWindow: a long task with big tool outputs stays inside
// its window through compactions, and the report says so.
func TestBenchContextWindow(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rep, err := Run(ctx, Config{Tasks: 1, Workers: 1, Rounds: 60, ContextWindow: 16_000, OutputBytes: 8000,
		Store: fleettest.SQLiteStore(t), StoreName: "sqlite", Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	c := rep.Context
	if rep.Succeeded != 1 || c == nil {
		t.Fatalf("report %+v", rep)
	}
	if c.MaxRequestTokens == 0 || c.MaxRequestTokens > 16_000 || c.Overflows != 0 || c.Compactions == 0 {
		t.Fatalf("context report %+v: want requests inside the window and compactions", c)
	}
}

func TestBenchTurnReadsTheHighestCallID(t *testing.T) {
	for body, want := range map[string]int{
		`{"messages":[{"role":"user","content":"go"}]}`:                  0,
		`"id":"toolu_bench_0" ... "tool_use_id":"toolu_bench_0"`:         1,
		`summary ... "id":"toolu_bench_41" ... "id":"toolu_bench_42"...`: 43,
	} {
		if got := benchTurn([]byte(body)); got != want {
			t.Errorf("benchTurn(%s) = %d, want %d", body, got, want)
		}
	}
}
