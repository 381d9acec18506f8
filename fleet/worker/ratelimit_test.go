package worker_test

import (
	"context"
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/agent"
	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/fleettest"
	"github.com/agentfleet/agentfleet/fleet/worker"
	"github.com/agentfleet/agentfleet/llm/ratelimit"
	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/store"
)

// TestRateLimitWaitIsVisible: with a fleet-wide limit of 60 requests a
// minute (one a second), a task's later model calls wait; each wait is a
// RATE_LIMITED event of the task's session and counted in
// llm_rate_limit_waits_total. A rule without a limit is refused.
func TestRateLimitWaitIsVisible(t *testing.T) {
	t.Parallel()
	f := fleettest.Start(t, fleettest.Options{Workers: 1, SQLite: true, Worker: func(_ int, c *worker.Config) {
		c.RateLimits = ratelimit.Rules{{Provider: "anthropic", Limits: ratelimit.Limits{RequestsPerMinute: 60}}}
	}})
	id := f.Submit(fleettest.Spec("limited", fleettest.Step{Calls: []fleettest.Call{fleettest.Shell("echo 1")}},
		fleettest.Step{Calls: []fleettest.Call{fleettest.Shell("echo 2")}}, fleettest.Step{Text: "done"}))
	if done := f.WaitDone(id); done.State != store.TaskSucceeded {
		t.Fatalf("task %s %s", done.State, done.Error)
	}
	ctx, cancel := context.WithTimeout(context.Background(), fleettest.Wait)
	defer cancel()
	sub, err := f.Queue.SubscribeEvents(ctx, queue.EventFilter{TaskID: id.String()}, queue.FromStart())
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Stop()
	waits := 0
	for {
		ev, err := sub.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if ev.Kind == string(agent.EventRateLimited) {
			waits++
			if !strings.Contains(string(ev.Data), "requests per minute") {
				t.Errorf("RATE_LIMITED event %s does not say which limit", ev.Data)
			}
		}
		if ev.Kind == fleet.KindSessionEnd {
			break
		}
	}
	if waits < 1 {
		t.Fatal("no RATE_LIMITED event: no model call waited at one request a second")
	}
	if n := metricValue(t, f.Workers()[0].Gatherer(), "agentfleet_worker_llm_rate_limit_waits_total"); n < 1 {
		t.Fatalf("llm_rate_limit_waits_total = %v, want >= 1", n)
	}

	cfg := f.WorkerConfig(9)
	cfg.RateLimits = ratelimit.Rules{{Provider: "anthropic"}}
	if err := cfg.WithDefaults().Validate(); err == nil || !strings.Contains(err.Error(), "rate_limits[0] sets no limit") {
		t.Fatalf("a rate limit of zero: %v", err)
	}
}
