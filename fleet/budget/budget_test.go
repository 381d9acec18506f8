package budget_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/budget"
	"github.com/agentfleet/agentfleet/internal/testenv"
	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/queue/natstest"
	"github.com/agentfleet/agentfleet/store"
)

func TestValidateNamesTheField(t *testing.T) {
	for b, field := range map[budget.Budget]string{
		{Label: "team", LimitUSD: 1}:                          "label",
		{Label: "team=a", LimitUSD: -1}:                       "limit_usd",
		{Label: "team=a", LimitUSD: 1, OnExhausted: "pause"}:  "on_exhausted",
		{Label: "=a", LimitUSD: 1}:                            "label",
		{Label: "team=a", LimitUSD: 0, OnExhausted: "cancel"}: "",
		{Label: "team:a", LimitUSD: 2.5, OnExhausted: "hold"}: "",
		{Label: "*", LimitUSD: 1}:                             "label",
		{Tenant: "acme", Label: "*", LimitUSD: 1}:             "",
		{Tenant: "acme", Label: "team", LimitUSD: 1}:          "label",
	} {
		err := b.Validate()
		var fe *fleet.FieldError
		switch {
		case field == "" && err != nil:
			t.Errorf("%+v: %v, want valid", b, err)
		case field != "" && (!errors.As(err, &fe) || fe.Field != field):
			t.Errorf("%+v: %v, want an error naming %s", b, err, field)
		}
	}
}

// TestBookAndWatcher: a budget put by one client is read, listed and seen
// by a watcher on another connection; an exhausted cancel budget wins
// over a hold one; deleting it is seen too.
func TestBookAndWatcher(t *testing.T) {
	ns := natstest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	writer, reader := bookOn(ctx, t, ns), bookOn(ctx, t, ns)
	w, err := reader.Watch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = w.Stop() }()
	if _, err := writer.Get(ctx, "", "team=a"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a missing budget: %v", err)
	}
	// A new budget is not exhausted until checked; a limit of 0 on a
	// budget that exists is, at once.
	for _, b := range []budget.Budget{{Label: "team=a", LimitUSD: 0}, {Label: "team=a", LimitUSD: 0}, {Label: "env=ci", LimitUSD: 0, OnExhausted: budget.Cancel}, {Label: "env=ci", LimitUSD: 0, OnExhausted: budget.Cancel}} {
		if _, err := writer.Put(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	all, err := writer.List(ctx)
	if err != nil || len(all) != 2 || all[0].Label != "env=ci" || all[1].OnExhausted != budget.Hold {
		t.Fatalf("List = %+v, %v", all, err)
	}
	testenv.Eventually(t, 10*time.Second, "the watcher to see both budgets spent", func() bool {
		b, ok := w.Exhausted("acme", map[string]string{"team": "a", "env": "ci"})
		return ok && b.OnExhausted == budget.Cancel
	})
	if _, ok := w.Exhausted("acme", map[string]string{"team": "b"}); ok {
		t.Fatal("a label without a budget is exhausted")
	}
	if err := writer.Delete(ctx, "", "env=ci"); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 10*time.Second, "the watcher to see the deletion", func() bool {
		b, ok := w.Exhausted("acme", map[string]string{"team": "a", "env": "ci"})
		return ok && b.Label == "team=a"
	})
}

// TestTenantBudgets: a tenant's label budget applies to that tenant's
// tasks only, a tenant's budget of every task to each of its tasks, and
// the same label has a budget in two tenants and fleet-wide at once.
func TestTenantBudgets(t *testing.T) {
	ctx, bk := openBook(t)
	w, err := bk.Watch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = w.Stop() }()
	for _, b := range []budget.Budget{
		{Tenant: "acme", Label: "team=a", LimitUSD: 5},
		{Tenant: "beta", Label: "team=a", LimitUSD: 7},
		{Label: "team=a", LimitUSD: 9},
		{Tenant: "gamma", Label: budget.AllTasks, LimitUSD: 3},
	} {
		for range 2 { // the second put of a budget that exists is exhausted at a limit below its spend (0)
			b.LimitUSD = 0
			if _, err := bk.Put(ctx, b); err != nil {
				t.Fatal(err)
			}
		}
	}
	all, err := bk.List(ctx)
	if err != nil || len(all) != 4 || all[0].Tenant != "" || all[1].Tenant != "acme" || all[3].Label != "*" {
		t.Fatalf("List = %+v, %v", all, err)
	}
	if b, err := bk.Get(ctx, "beta", "team=a"); err != nil || b.Tenant != "beta" {
		t.Fatalf("Get(beta, team=a) = %+v, %v", b, err)
	}
	if err := bk.Delete(ctx, "", "team=a"); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 10*time.Second, "the watcher to see gamma's budget", func() bool {
		b, ok := w.Exhausted("gamma", map[string]string{"x": "y"})
		return ok && b.Label == budget.AllTasks
	})
	testenv.Eventually(t, 10*time.Second, "the fleet-wide budget gone", func() bool {
		_, ok := w.Exhausted("delta", map[string]string{"team": "a"})
		return !ok
	})
	if b, ok := w.Exhausted("acme", map[string]string{"team": "a"}); !ok || b.Tenant != "acme" {
		t.Fatalf("acme's task: %+v, %v; want acme's budget", b, ok)
	}
	if _, ok := w.Exhausted("acme", map[string]string{"team": "b"}); ok {
		t.Fatal("acme's budget of team=a applies to team=b")
	}
	if _, ok := w.Exhausted("", nil); ok {
		t.Fatal("a task without tenant or labels has a budget")
	}
	if !w.HasTenant("gamma") || w.HasTenant("acme") || w.HasTenant("") {
		t.Fatal("HasTenant: want gamma (a budget of every task), not acme (label budgets only)")
	}
	if !w.Has("team=a") || w.Has("x=y") {
		t.Fatal("Has: want team=a (a tenant's label) budgeted, x=y not")
	}
}

// racingSpend reads no spend, and the first time it is asked runs another
// check of the same budget first, as the periodic check can while an
// operator's PUT checks it.
type racingSpend struct {
	e     *budget.Enforcer
	raced atomic.Bool
	err   error
}

func (s *racingSpend) Usage(ctx context.Context, _ store.UsageParams) ([]store.UsageRow, error) {
	if !s.raced.Swap(true) {
		_, s.err = s.e.Check(ctx, "acme", budget.AllTasks)
	}
	return nil, nil
}

type noActions struct{}

func (noActions) Release(context.Context, string, string) (int, error)      { return 0, nil }
func (noActions) CancelQueued(context.Context, string, string) (int, error) { return 0, nil }

// TestCheckThatLosesTheRaceAnswersTheBudgetAsItStands: a check whose
// write loses to another check's answers the budget the other wrote (spent
// at once, for a limit of $0), not the budget before both.
func TestCheckThatLosesTheRaceAnswersTheBudgetAsItStands(t *testing.T) {
	ctx, book := openBook(t)
	if _, err := book.Put(ctx, budget.Budget{Tenant: "acme", Label: budget.AllTasks, OnExhausted: budget.Cancel}); err != nil {
		t.Fatal(err)
	}
	spend := &racingSpend{}
	e := &budget.Enforcer{Book: book, Spend: spend, Actions: noActions{}}
	spend.e = e
	b, err := e.Check(ctx, "acme", budget.AllTasks)
	if err != nil || spend.err != nil {
		t.Fatalf("Check: %v, the racing check: %v", err, spend.err)
	}
	if !b.Exhausted || b.CheckedAt.IsZero() {
		t.Fatalf("the losing check answered %+v; want the budget spent and checked, as the winner wrote it", b)
	}
}

// openBook opens the budgets of a NATS server of the test's own, with a
// context that ends with the test (30 s at most).
func openBook(t *testing.T) (context.Context, *budget.Book) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx, bookOn(ctx, t, natstest.Start(t))
}

// bookOn opens the budgets on a connection of its own to ns.
func bookOn(ctx context.Context, t *testing.T, ns *natstest.Server) *budget.Book {
	t.Helper()
	q, err := queue.Open(ctx, ns.Connect(t), queue.Config{})
	if err != nil {
		t.Fatal(err)
	}
	book, err := budget.Open(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	return book
}
