package dispatcher_test

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/dispatcher"
	"github.com/agentfleet/agentfleet/fleet/fleettest"
	"github.com/agentfleet/agentfleet/store"
)

// clockDispatcher is a dispatcher on f whose schedule loop never runs:
// the test fires its passes with FireDue and StartDue at times it picks.
func clockDispatcher(t *testing.T, f *fleettest.Fleet) *dispatcher.Dispatcher {
	t.Helper()
	d, err := dispatcher.New(f.Store, f.Queue, dispatcher.Config{Logger: slog.New(slog.DiscardHandler), ScheduleInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestRunAtStartsAtItsTimeNotBefore: a task submitted with run_at an hour
// ahead is stored queued but not offered to workers, while its batch
// mate without run_at runs to the end; a pass before its time leaves it
// waiting; a dispatcher started afterwards (a restart: the start time is
// in the store) starts it at its time, and it runs to the end.
func TestRunAtStartsAtItsTimeNotBefore(t *testing.T) {
	f := fleettest.Start(t, fleettest.Options{SQLite: true, Workers: 1})
	ctx := context.Background()
	first := clockDispatcher(t, f)
	at := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	late := fleettest.Spec("late", fleettest.Step{Text: "late done"})
	late.RunAt = &at
	subs, err := first.Submit(ctx, []fleet.TaskSpec{late, fleettest.Spec("now", fleettest.Step{Text: "now done"})})
	if err != nil {
		t.Fatal(err)
	}
	delayed, now := subs[0].Task.ID, subs[1].Task.ID
	if got := f.WaitDone(now); got.State != store.TaskSucceeded {
		t.Fatalf("the task without run_at: %s", got.State)
	}
	if got := f.Task(delayed); got.State != store.TaskQueued || got.Attempts != 0 {
		t.Fatalf("the delayed task ran before its time: %s, %d attempts", got.State, got.Attempts)
	}
	first.StartDue(ctx, at.Add(-time.Second))
	if due, err := f.Store.DueDelayedStarts(ctx, at, 0); err != nil || len(due) != 1 || due[0].TaskID != delayed || !due[0].RunAt.Equal(at) {
		t.Fatalf("a pass before run_at: start times %+v, %v; want the task's, kept", due, err)
	}

	restarted := clockDispatcher(t, f)
	restarted.StartDue(ctx, at)
	if got := f.WaitDone(delayed); got.State != store.TaskSucceeded {
		t.Fatalf("the delayed task at its time: %s", got.State)
	}
	if due, err := f.Store.DueDelayedStarts(ctx, at, 0); err != nil || len(due) != 0 {
		t.Fatalf("after its start: start times %+v, %v; want none", due, err)
	}
}

// TestRunAtIsValidated: a run_at in the past, too far ahead, or in a
// schedule's spec is a field error saying what to do.
func TestRunAtIsValidated(t *testing.T) {
	f := fleettest.Start(t, fleettest.Options{SQLite: true, NoWorkers: true})
	d := clockDispatcher(t, f)
	ctx := context.Background()
	past, far := time.Now().Add(-time.Hour), time.Now().Add(400*24*time.Hour)
	for _, c := range []struct {
		at   time.Time
		want string
	}{{past, "in the past"}, {far, "days ahead"}} {
		spec := fleettest.Spec("x")
		spec.RunAt = &c.at
		_, err := d.Submit(ctx, []fleet.TaskSpec{spec})
		if err == nil || !strings.Contains(err.Error(), "run_at") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("run_at %s: %v, want a run_at error saying %q", c.at, err, c.want)
		}
	}
	soon := time.Now().Add(time.Minute)
	spec := fleettest.Spec("x")
	spec.RunAt = &soon
	if _, err := d.CreateSchedule(ctx, "s", "@daily", spec, false); err == nil || !strings.Contains(err.Error(), "run_at") {
		t.Errorf("a schedule with run_at: %v, want refused", err)
	}
}

// TestScheduleTickFiresOnceWithTwoDispatchersOnAClock: two dispatchers on
// one store and one NATS fire the same due tick at the same instant,
// three ticks in a row; each tick yields exactly one task, under its own
// key, and the schedule moves on past it.
func TestScheduleTickFiresOnceWithTwoDispatchersOnAClock(t *testing.T) {
	f := fleettest.Start(t, fleettest.Options{SQLite: true, NoWorkers: true})
	a, b := clockDispatcher(t, f), clockDispatcher(t, f)
	ctx := context.Background()
	spec := fleettest.Spec("lint")
	spec.Tenant = "default"
	s, err := a.CreateSchedule(ctx, "hourly", "@hourly", spec, false)
	if err != nil {
		t.Fatal(err)
	}
	labels := map[string]string{dispatcher.ScheduleLabel: s.ID.String()}
	for n := 1; n <= 3; n++ {
		cur, err := f.Store.GetSchedule(ctx, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		tick := cur.NextFireAt
		var wg sync.WaitGroup
		for _, d := range []*dispatcher.Dispatcher{a, b} {
			wg.Go(func() { d.FireDue(ctx, tick) })
		}
		wg.Wait()
		page, err := f.Store.ListTasks(ctx, store.ListTasksParams{Labels: labels})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Tasks) != n {
			t.Fatalf("after tick %d: %d tasks, want %d (one per tick)", n, len(page.Tasks), n)
		}
		if key := page.Tasks[0].IdempotencyKey; !strings.HasSuffix(key, tick.UTC().Format(time.RFC3339)) {
			t.Fatalf("tick %d's task has the key %q, want its tick %s", n, key, tick)
		}
		after, err := f.Store.GetSchedule(ctx, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		if want := tick.Add(time.Hour); !after.NextFireAt.Equal(want) || !after.LastFireAt.Equal(tick) {
			t.Fatalf("after tick %d: next %s, last %s; want %s, %s", n, after.NextFireAt, after.LastFireAt, want, tick)
		}
		// The same instant again fires nothing more.
		a.FireDue(ctx, tick)
		if page, _ := f.Store.ListTasks(ctx, store.ListTasksParams{Labels: labels}); len(page.Tasks) != n {
			t.Fatalf("tick %d fired twice: %d tasks", n, len(page.Tasks))
		}
	}
}
