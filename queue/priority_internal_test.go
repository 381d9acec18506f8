package queue

import (
	"slices"
	"testing"
	"time"
)

// The subjects of priorities 1, 0 and -1 are those of the bands before
// levels (high, the queue's own, low), so that what an older dispatcher
// queued is served after an upgrade; every other priority has its own.
func TestLevelSubjects(t *testing.T) {
	subj := Subjects{prefix: "agentfleet"}
	for prio, want := range map[int]string{
		0: "agentfleet.tasks.q", 1: "agentfleet.tasks.q.high", -1: "agentfleet.tasks.q.low",
		2: "agentfleet.tasks.q.p2", 1000: "agentfleet.tasks.q.p1000", -1000: "agentfleet.tasks.q.p-1000",
	} {
		if got := subj.TasksLevel("q", prio); got != want {
			t.Errorf("TasksLevel(q, %d) = %s, want %s", prio, got, want)
		}
	}
	for prio, want := range map[int]string{0: "agentfleet.tasks.q.normal.team", 1: "agentfleet.tasks.q.high.team", 7: "agentfleet.tasks.q.p7.team"} {
		if got := subj.TasksKey("q", prio, "team"); got != want {
			t.Errorf("TasksKey(q, %d, team) = %s, want %s", prio, got, want)
		}
	}
}

// Every priority a spec may carry has a level token that reads back as
// itself, and no key or other word reads as a level.
func TestLevelTokensRoundTrip(t *testing.T) {
	for prio := -1000; prio <= 1000; prio++ {
		if got, ok := parseLevel(levelToken(prio)); !ok || got != prio {
			t.Fatalf("parseLevel(%q) = %d, %v; want %d", levelToken(prio), got, ok, prio)
		}
	}
	for _, tok := range []string{"", "p", "p0", "p1", "p-1", "p+5", "p05", "pX", "team", "default"} {
		if prio, ok := parseLevel(tok); ok {
			t.Errorf("parseLevel(%q) = %d: not a level token", tok, prio)
		}
	}
}

// An idle loop's waits grow from idleWaitFirst to keyedIdleWait, and work
// or a hint makes the next one short again.
func TestIdleWaitBacksOffAndResets(t *testing.T) {
	g := &levelLoop{}
	var got []time.Duration
	for range 6 {
		got = append(got, g.idleWait())
	}
	want := []time.Duration{idleWaitFirst, 2 * idleWaitFirst, 4 * idleWaitFirst, 8 * idleWaitFirst, keyedIdleWait, keyedIdleWait}
	if !slices.Equal(got, want) {
		t.Fatalf("idle waits %v, want %v", got, want)
	}
	g.busy()
	if w := g.idleWait(); w != idleWaitFirst {
		t.Fatalf("the first idle wait after work is %v, want %v", w, idleWaitFirst)
	}
}
