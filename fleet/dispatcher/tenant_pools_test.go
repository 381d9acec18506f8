package dispatcher_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/dispatcher"
	"github.com/agentfleet/agentfleet/fleet/fleettest"
	"github.com/agentfleet/agentfleet/fleet/worker"
	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/store"
)

// poolFleet is a fleet on NATS with the shipped permissions and two
// workers: w0, the pool of tenant team-a (queue team-a, tenants [team-a],
// NATS user limited to team-a's control subjects), and w1 serving the
// default queue for every tenant; and a dispatcher whose policy lets
// team-a use its queue only.
func poolFleet(t *testing.T) (*fleettest.Fleet, *dispatcher.Dispatcher) {
	t.Helper()
	f := fleettest.Start(t, fleettest.Options{Workers: 2, SQLite: true, Restricted: true, Pools: [][]string{{"team-a"}},
		Worker: func(i int, c *worker.Config) {
			if i == 0 {
				c.Queues, c.Tenants = []string{"team-a"}, []string{"team-a"}
			}
		}})
	d, err := dispatcher.New(f.Store, f.Queue, dispatcher.Config{Logger: slog.New(slog.DiscardHandler),
		Policy: fleet.Policy{TenantQueues: fleet.TenantQueues{"team-a": {"team-a"}}}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() { defer close(ran); _ = d.Run(ctx) }()
	t.Cleanup(func() { stop(); <-ran })
	return f, d
}

func submit(t *testing.T, d *dispatcher.Dispatcher, spec fleet.TaskSpec) (store.Task, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), fleettest.Wait)
	defer cancel()
	subs, err := d.Submit(ctx, []fleet.TaskSpec{spec})
	if err != nil {
		return store.Task{}, err
	}
	return subs[0].Task, nil
}

func atGate(t *testing.T, f *fleettest.Fleet, gate string) {
	t.Helper()
	select {
	case <-f.Model.Arrived(gate):
	case <-time.After(fleettest.Wait):
		t.Fatalf("the task never reached gate %s", gate)
	}
}

// A task of team-a submitted without a queue goes to team-a's queue (the
// policy's first), runs on team-a's pool, and is steered and cancelled
// through the dispatcher over team-a's control subject, which the pool's
// NATS user may serve; nobody is refused anything on the way. Naming
// another queue is refused at submission.
func TestTenantPoolIsSteeredThroughTheDispatcher(t *testing.T) {
	t.Parallel()
	f, d := poolFleet(t)
	ctx, cancel := context.WithTimeout(context.Background(), fleettest.Wait)
	defer cancel()

	spec := fleettest.Spec("pool-steer",
		fleettest.Step{Gate: "pool-steer", Calls: []fleettest.Call{fleettest.Shell("true")}},
		fleettest.Step{Text: "last said: {{last_user}}"})
	spec.Tenant = "team-a"
	task, err := submit(t, d, spec)
	if err != nil {
		t.Fatal(err)
	}
	if task.Queue != "team-a" {
		t.Fatalf("team-a's task went to queue %q, want its pool's team-a", task.Queue)
	}
	atGate(t, f, "pool-steer")
	reply, err := d.Control(ctx, task.ID, queue.ControlRequest{Op: queue.OpSteer, Message: "say hi"})
	if err != nil {
		t.Fatalf("steering team-a's task: %v", err)
	}
	if reply.Status == nil || reply.Status.WorkerID != "w0" {
		t.Fatalf("status %+v, want team-a's pool w0", reply.Status)
	}
	f.Model.Open("pool-steer")
	done := f.WaitDone(task.ID)
	if res := fleettest.Result(t, done); done.State != store.TaskSucceeded || res.FinalText != "last said: say hi" {
		t.Fatalf("steered task: %s, %q; the steer did not reach the model", done.State, res.FinalText)
	}

	spec = fleettest.Spec("pool-cancel", fleettest.Step{Gate: "pool-cancel", Text: "never"})
	spec.Tenant = "team-a"
	if task, err = submit(t, d, spec); err != nil {
		t.Fatal(err)
	}
	atGate(t, f, "pool-cancel")
	res, err := d.Cancel(ctx, task.ID, "not needed")
	if err != nil || res.Aborted != 1 {
		t.Fatalf("cancel of team-a's running task: %+v, %v; want its session aborted over control", res, err)
	}
	f.Model.Open("pool-cancel")
	if done := f.WaitDone(task.ID); done.State != store.TaskCancelled {
		t.Fatalf("cancelled task is %s", done.State)
	}

	spec = fleettest.Spec("elsewhere", fleettest.Step{Text: "no"})
	spec.Tenant, spec.Queue = "team-a", fleet.DefaultQueue
	_, err = submit(t, d, spec)
	var fe *fleet.FieldError
	if !errors.As(err, &fe) || fe.Field != "spec.queue" || !strings.Contains(fe.Reason, "team-a") {
		t.Fatalf("team-a naming the default queue: %v, want a spec.queue error naming team-a's queue", err)
	}
	if v := f.PermissionViolations(); len(v) > 0 {
		t.Fatalf("the server refused the fleet %d times, first: %v", len(v), v[0])
	}
}

// A task of another tenant that lands in team-a's queue anyway (stored
// without the dispatcher's policy) is not run by team-a's pool: it fails
// at once with tenant_not_served and a reason saying what to fix, and
// its message is not handed back to loop.
func TestTenantPoolRefusesAnotherTenantsTask(t *testing.T) {
	t.Parallel()
	f, _ := poolFleet(t)
	spec := fleettest.Spec("stray", fleettest.Step{Text: "must not run"})
	spec.Tenant, spec.Queue = "team-b", "team-a"
	id := f.Submit(spec)
	done := f.WaitDone(id)
	if done.State != store.TaskFailed || done.Error != fleet.ReasonTenantNotServed {
		t.Fatalf("team-b's task on team-a's pool: %s %q, want failed %s", done.State, done.Error, fleet.ReasonTenantNotServed)
	}
	if res := fleettest.Result(t, done); !strings.Contains(res.Error, "misconfiguration") || !strings.Contains(res.Error, "tenant_queues") {
		t.Fatalf("the reason %q does not say what to fix", res.Error)
	}
	if done.WorkerID != "w0" {
		t.Fatalf("claimed by %q, want team-a's pool w0", done.WorkerID)
	}
	if n := f.Model.Total(); n != 0 {
		t.Fatalf("the model was called %d times for a task that must not run", n)
	}
	if lag := f.WaitQueueDrained("team-a"); lag.Pending != 0 {
		t.Fatalf("team-a's queue still holds %+v", lag)
	}
}
