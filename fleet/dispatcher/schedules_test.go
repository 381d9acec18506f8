package dispatcher_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/api"
	"github.com/agentfleet/agentfleet/fleet/client"
	"github.com/agentfleet/agentfleet/fleet/dispatcher"
	"github.com/agentfleet/agentfleet/fleet/fleettest"
	"github.com/agentfleet/agentfleet/internal/testenv"
	"github.com/agentfleet/agentfleet/store"
)

// TestScheduleFiresOncePerTickWithTwoDispatchers: two dispatchers look for
// due schedules every 10 ms; a schedule firing every second submits one
// task per tick (each under its tick's key, consecutive ticks, one start
// message each), then a paused one fires none, and a deleted one is gone.
func TestScheduleFiresOncePerTickWithTwoDispatchers(t *testing.T) {
	f := fleettest.Start(t, fleettest.Options{NoWorkers: true, SQLite: true})
	c := scheduledDispatcher(t, f)
	scheduledDispatcher(t, f)
	ctx := context.Background()

	if _, err := c.CreateSchedule(ctx, api.ScheduleRequest{Cron: "every day", Spec: fleet.TaskSpec{Prompt: "x", Profile: "openai"}}); !isCode(err, 400) {
		t.Fatalf("a bad cron expression: %v, want 400", err)
	}
	s, err := c.CreateSchedule(ctx, api.ScheduleRequest{Name: "tick", Cron: "@every 1s", Spec: fleet.TaskSpec{Prompt: "lint", Profile: "openai"}})
	if err != nil {
		t.Fatal(err)
	}
	if s.Tenant != "default" || s.CreatedBy == "" || s.Paused || s.NextFireAt.IsZero() {
		t.Fatalf("created %+v", s)
	}
	labels := map[string]string{dispatcher.ScheduleLabel: s.ID.String()}
	var tasks []store.Task
	testenv.EventuallyErr(t, fleettest.Wait, "3 ticks", func() error {
		page, err := f.Store.ListTasks(ctx, store.ListTasksParams{Labels: labels})
		if err != nil {
			return err
		}
		if tasks = page.Tasks; len(tasks) < 3 {
			return fmt.Errorf("%d tasks", len(tasks))
		}
		return nil
	})
	ticks := map[string]bool{}
	for _, task := range tasks {
		if ticks[task.IdempotencyKey] || task.SubmittedBy != s.CreatedBy || task.Tenant != "default" {
			t.Fatalf("task %+v: a tick fired twice or as someone else", task)
		}
		ticks[task.IdempotencyKey] = true
	}
	// Consecutive ticks: newest first, a second apart.
	for i := 1; i < len(tasks); i++ {
		var a, b time.Time
		a = tickOf(t, tasks[i-1].IdempotencyKey)
		b = tickOf(t, tasks[i].IdempotencyKey)
		if a.Sub(b) < time.Second {
			t.Errorf("ticks %s and %s are less than a second apart", a, b)
		}
	}

	paused, err := c.PauseSchedule(ctx, s.ID, true)
	if err != nil || !paused.Paused {
		t.Fatalf("pause: %+v, %v", paused, err)
	}
	list, err := c.Schedules(ctx)
	if err != nil || len(list) != 1 || !list[0].Paused || list[0].LastFireAt == nil {
		t.Fatalf("listed %+v, %v", list, err)
	}
	if err := c.DeleteSchedule(ctx, s.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Schedule(ctx, s.ID); !isCode(err, 404) {
		t.Fatalf("a deleted schedule: %v, want 404", err)
	}
}

// tickOf reads the tick of a schedule's idempotency key.
func tickOf(t *testing.T, key string) time.Time {
	t.Helper()
	tick, err := time.Parse(time.RFC3339, key[len("schedule:")+36+1:])
	if err != nil {
		t.Fatalf("key %q: %v", key, err)
	}
	return tick
}

func isCode(err error, status int) bool {
	var ae *client.APIError
	return errors.As(err, &ae) && ae.Status == status
}

// scheduledDispatcher runs a dispatcher on f that looks for due schedules
// every 10 ms, behind an HTTP server, and returns its client.
func scheduledDispatcher(t *testing.T, f *fleettest.Fleet) *client.Client {
	t.Helper()
	d, err := dispatcher.New(f.Store, f.Queue, dispatcher.Config{Logger: slog.New(slog.DiscardHandler), ScheduleInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() { defer close(ran); _ = d.Run(ctx) }()
	srv := httptest.NewServer(d.Handler(dispatcher.APIOptions{Token: "t0k"}))
	t.Cleanup(func() { srv.CloseClientConnections(); srv.Close(); stop(); <-ran })
	c, err := client.New(srv.URL, "t0k", nil)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
