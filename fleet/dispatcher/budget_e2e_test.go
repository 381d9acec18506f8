package dispatcher_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/api"
	"github.com/agentfleet/agentfleet/fleet/budget"
	"github.com/agentfleet/agentfleet/fleet/client"
	"github.com/agentfleet/agentfleet/fleet/dispatcher"
	"github.com/agentfleet/agentfleet/fleet/fleettest"
	"github.com/agentfleet/agentfleet/fleet/worker"
	"github.com/agentfleet/agentfleet/internal/testenv"
	"github.com/agentfleet/agentfleet/llm/pricing"
	"github.com/agentfleet/agentfleet/store"
)

// budgetFleet is a fleet whose every model turn costs $1 (100 input
// tokens at $10,000 per million), with a dispatcher checking budgets every
// 50 ms.
func budgetFleet(t *testing.T) (*fleettest.Fleet, *client.Client) {
	f, c, _ := budgetFleetURL(t)
	return f, c
}

func budgetFleetURL(t *testing.T) (*fleettest.Fleet, *client.Client, string) {
	t.Helper()
	f := fleettest.Start(t, fleettest.Options{Workers: 1, Slots: 4, SQLite: true, Worker: func(_ int, c *worker.Config) {
		c.Prices = map[string]pricing.Price{"claude-test": {InputPerMTok: 10_000}}
	}})
	d, err := dispatcher.New(f.Store, f.Queue, dispatcher.Config{BudgetCheckInterval: 50 * time.Millisecond,
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() { defer close(ran); _ = d.Run(ctx) }()
	srv := httptest.NewServer(d.Handler(dispatcher.APIOptions{}))
	t.Cleanup(func() { srv.CloseClientConnections(); srv.Close(); stop(); <-ran })
	c, err := client.New(srv.URL, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	return f, c, srv.URL
}

func shellStep(gate string) fleettest.Step {
	return fleettest.Step{Gate: gate, Calls: []fleettest.Call{fleettest.Shell("echo step")}}
}

func labelled(spec fleet.TaskSpec, label string) fleet.TaskSpec {
	k, v, _ := strings.Cut(label, "=")
	spec.Labels = map[string]string{k: v}
	return spec
}

func waitExhausted(t *testing.T, c *client.Client, label string) api.Budget {
	t.Helper()
	var b api.Budget
	testenv.EventuallyErr(t, fleettest.Wait, label+"'s budget to be spent", func() (err error) {
		if b, err = c.Budget(context.Background(), label); err == nil && !b.Exhausted {
			err = fmt.Errorf("budget %+v", b)
		}
		return err
	})
	return b
}

// budgetLaterTurns is how many gated turns a task of a spent budget is
// given after the API says the budget is spent.
const budgetLaterTurns = 20

// letTurnsThroughUntil opens the gates prefix<first>, prefix<first+1>,
// ... one at a time, each once the task asked for that turn, until the
// task is as stop wants it, and returns the number of the last gate it
// opened (first-1 if none). A worker learns that a budget is spent through
// its own watch of the budgets bucket, a moment after the API (under load,
// a turn or more later): fleet/budget's contract lets a running task take
// one more turn meanwhile, so the test waits for the worker rather than a
// clock.
func letTurnsThroughUntil(t *testing.T, f *fleettest.Fleet, id uuid.UUID, prefix string, first int, stop func(store.Task) bool) int {
	t.Helper()
	for i := first; i < first+budgetLaterTurns; i++ {
		gate := fmt.Sprint(prefix, i)
		testenv.Eventually(t, fleettest.Wait, "the task to stop or to ask for its turn at "+gate, func() bool {
			select {
			case <-f.Model.Arrived(gate):
				return true
			default:
				return stop(f.Task(id))
			}
		})
		if stop(f.Task(id)) {
			return i - 1
		}
		f.Model.Open(gate)
	}
	t.Fatalf("the task went on for %d turns after its budget was spent", budgetLaterTurns)
	return 0
}

// laterTurns are the steps of budgetLaterTurns gated turns, prefix<first>
// onwards, each running a command of its own (the same call over and over
// would be stopped by the progress watchdog).
func laterTurns(prefix string, first int) []fleettest.Step {
	steps := make([]fleettest.Step, budgetLaterTurns)
	for i := range steps {
		gate := fmt.Sprint(prefix, first+i)
		steps[i] = fleettest.Step{Gate: gate, Calls: []fleettest.Call{fleettest.Shell("echo " + gate)}}
	}
	return steps
}

func lastEventKind(t *testing.T, f *fleettest.Fleet, task store.Task) string {
	t.Helper()
	ev, ok, err := f.Queue.LastEvent(context.Background(), task.RootID.String(), task.ID.String())
	if err != nil || !ok {
		t.Fatalf("last event of %s: %v %v", task.ID, ok, err)
	}
	return ev.Kind
}

// TestBudgetHoldAndRaise: a running task of a label whose budget is spent
// finishes its turn and is held (queued, error budget, BUDGET_HELD); a
// queued one is held before it starts; raising the budget resumes both.
func TestBudgetHoldAndRaise(t *testing.T) {
	f, c := budgetFleet(t)
	ctx := context.Background()
	b, err := c.PutBudget(ctx, "team=a", api.BudgetRequest{LimitUSD: 2.5})
	if err != nil {
		t.Fatal(err)
	}
	if b.Tasks != 0 || !strings.Contains(b.Note, "no task carries the label team=a") || b.OnExhausted != budget.Hold {
		t.Fatalf("budget on a label without tasks: %+v", b)
	}
	// Turns 0..2 cost $3; each later turn waits at a gate of its own, and
	// the answer comes after the last.
	first := 3 // the first turn after the budget is spent
	steps := append([]fleettest.Step{shellStep(""), shellStep(""), shellStep("a2")}, laterTurns("a", first)...)
	steps = append(steps, fleettest.Step{Text: "a done"})
	a := f.Submit(labelled(fleettest.Spec("a", steps...), "team=a"))
	f.Model.Open("a2")
	waitExhausted(t, c, "team=a")
	isHeld := func(t store.Task) bool { return t.State == store.TaskQueued && t.Error == budget.Reason }
	last := letTurnsThroughUntil(t, f, a, "a", first, isHeld) // the turn in progress is recorded, then the run stops
	held := f.WaitFor("task a held", a, isHeld)
	if k := lastEventKind(t, f, held); k != budget.EventHeld {
		t.Fatalf("last event of the held task: %s", k)
	}
	if n := f.Model.Requests(fleettest.Prompt("a", steps...), last+1); n != 0 {
		t.Fatalf("the held task asked for its next turn %d times", n)
	}

	bID := f.Submit(labelled(fleettest.Spec("b", fleettest.Step{Text: "b done"}), "team=a"))
	heldB := f.WaitFor("task b held", bID, func(t store.Task) bool { return t.State == store.TaskQueued && t.Error == budget.Reason })
	if heldB.Attempts != 1 || f.Model.Requests(fleettest.Prompt("b", fleettest.Step{Text: "b done"}), 0) != 0 {
		t.Fatalf("task b ran before the budget was raised: %+v", heldB)
	}
	if k := lastEventKind(t, f, heldB); k != budget.EventHeld {
		t.Fatalf("last event of the queued held task: %s", k)
	}

	if _, err := c.PutBudget(ctx, "team=a", api.BudgetRequest{LimitUSD: 100}); err != nil {
		t.Fatal(err)
	}
	for i := last + 1; i < first+budgetLaterTurns; i++ {
		f.Model.Open(fmt.Sprint("a", i))
	}
	for _, id := range []uuid.UUID{a, bID} {
		if done := f.WaitDone(id); done.State != store.TaskSucceeded {
			t.Fatalf("task %s after the raise: %s %s", id, done.State, done.Error)
		}
	}
	if res := fleettest.Result(t, f.Task(a)); res.CostUSD < float64(len(steps)) || res.TurnsUsed != len(steps) {
		t.Fatalf("task a's result: %+v", res)
	}
	rep, err := c.Usage(ctx, client.UsageQuery{GroupBy: "label", LabelKey: "team"})
	if err != nil || len(rep.Rows) != 1 || rep.Rows[0].Key != "a" || rep.Rows[0].Tasks != 2 || rep.Total.CostUSD < float64(len(steps)+1) {
		t.Fatalf("usage by team: %+v %v", rep, err)
	}
}

// TestBudgetCancel: with on_exhausted cancel, the running task ends
// cancelled with reason budget after a turn, and a task submitted after
// is cancelled without running.
func TestBudgetCancel(t *testing.T) {
	f, c := budgetFleet(t)
	ctx := context.Background()
	if _, err := c.PutBudget(ctx, "team=b", api.BudgetRequest{LimitUSD: 1.5, OnExhausted: budget.Cancel}); err != nil {
		t.Fatal(err)
	}
	// Turns 0 and 1 spend the budget; each later turn waits at a gate of
	// its own, and the answer comes after the last.
	steps := append([]fleettest.Step{shellStep(""), shellStep("c1")}, laterTurns("c", 2)...)
	run := f.Submit(labelled(fleettest.Spec("c", append(steps, fleettest.Step{Text: "c done"})...), "team=b"))
	f.Model.Open("c1")
	waitExhausted(t, c, "team=b")
	letTurnsThroughUntil(t, f, run, "c", 2, func(t store.Task) bool { return t.State.Terminal() })
	if done := f.WaitDone(run); done.State != store.TaskCancelled || done.Error != budget.Reason {
		t.Fatalf("running task: %s %q, want cancelled for its budget", done.State, done.Error)
	}
	later := f.Submit(labelled(fleettest.Spec("d", fleettest.Step{Text: "d done"}), "team=b"))
	if done := f.WaitDone(later); done.State != store.TaskCancelled || done.Error != budget.Reason {
		t.Fatalf("queued task: %s %q, want cancelled for its budget", done.State, done.Error)
	}
	if n := f.Model.Requests(fleettest.Prompt("d", fleettest.Step{Text: "d done"}), 0); n != 0 {
		t.Fatalf("the cancelled task asked the model %d times", n)
	}
}

// TestBudgetBadInput: a negative or non-numeric limit, a label that is not
// key=value and an unknown policy are 400s naming the field.
func TestBudgetBadInput(t *testing.T) {
	_, c, url := budgetFleetURL(t)
	ctx := context.Background()
	for _, tc := range []struct {
		label, body, field string
	}{
		{"team=x", `{"limit_usd": -1}`, "limit_usd"},
		{"team=x", `{"limit_usd": "ten"}`, "body.limit_usd"},
		{"team=x", `{"limit_usd": 1, "on_exhausted": "maybe"}`, "on_exhausted"},
		{"teamx", `{"limit_usd": 1}`, "label"},
	} {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPut, url+"/v1/budgets/"+tc.label, strings.NewReader(tc.body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var eb api.ErrorBody
		_ = json.NewDecoder(resp.Body).Decode(&eb)
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || eb.Error.Field != tc.field {
			t.Errorf("PUT %s %s: %d %+v, want a 400 naming %s", tc.label, tc.body, resp.StatusCode, eb.Error, tc.field)
		}
	}
	if _, err := c.Budget(ctx, "team=none"); err == nil || !strings.Contains(err.Error(), "no budget") {
		t.Errorf("GET of a missing budget: %v", err)
	}
}

// TestUsageBadInput: an unknown grouping, a label grouping without its key
// and a time that does not parse are 400s naming the parameter.
func TestUsageBadInput(t *testing.T) {
	_, _, url := budgetFleetURL(t)
	for query, field := range map[string]string{
		"group_by=week":    "group_by",
		"group_by=label":   "label_key",
		"since=yesterday":  "since",
		"label=nokeyvalue": "label",
	} {
		resp, err := http.Get(url + "/v1/usage?" + query)
		if err != nil {
			t.Fatal(err)
		}
		var eb api.ErrorBody
		_ = json.NewDecoder(resp.Body).Decode(&eb)
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || eb.Error.Field != field {
			t.Errorf("GET /v1/usage?%s: %d %+v, want a 400 naming %s", query, resp.StatusCode, eb.Error, field)
		}
	}
}

// TestTenantBudgetOfEveryTask: a spent cancel budget of every task of
// tenant acme cancels acme's task without running it, whatever its
// labels, while another tenant's task with the same label runs.
func TestTenantBudgetOfEveryTask(t *testing.T) {
	f, c := budgetFleet(t)
	ctx := context.Background()
	b, err := c.PutTenantBudget(ctx, "acme", budget.AllTasks, api.BudgetRequest{LimitUSD: 0, OnExhausted: budget.Cancel})
	if err != nil || !b.Exhausted || b.Tenant != "acme" {
		t.Fatalf("acme's budget of $0: %+v, %v; want spent at once", b, err)
	}
	testenv.EventuallyErr(t, fleettest.Wait, "acme's budget to be spent", func() error {
		got, err := c.TenantBudget(ctx, "acme", budget.AllTasks)
		if err == nil && !got.Exhausted {
			err = fmt.Errorf("budget %+v", got)
		}
		return err
	})
	spec := labelled(fleettest.Spec("acme's", fleettest.Step{Text: "acme done"}), "team=x")
	spec.Tenant = "acme"
	other := labelled(fleettest.Spec("beta's", fleettest.Step{Text: "beta done"}), "team=x")
	other.Tenant = "beta"
	var ids []uuid.UUID
	for _, s := range []fleet.TaskSpec{spec, other} { // through the API: fleettest.Submit leaves the tenant default
		sub, err := c.Submit(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, sub.Task.ID)
	}
	acme, beta := ids[0], ids[1]
	if done := f.WaitDone(acme); done.State != store.TaskCancelled || done.Error != budget.Reason {
		t.Fatalf("acme's task: %s %q, want cancelled for its tenant's budget", done.State, done.Error)
	}
	if n := f.Model.Requests(fleettest.Prompt("acme's", fleettest.Step{Text: "acme done"}), 0); n != 0 {
		t.Fatalf("acme's cancelled task asked the model %d times", n)
	}
	if done := f.WaitDone(beta); done.State != store.TaskSucceeded {
		t.Fatalf("beta's task: %s %q, want succeeded (acme's budget is not beta's)", done.State, done.Error)
	}
}
