package budget_test

import (
	"context"
	"errors"
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
	open := func() *budget.Book {
		q, err := queue.Open(ctx, ns.Connect(t), queue.Config{})
		if err != nil {
			t.Fatal(err)
		}
		b, err := budget.Open(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	writer, reader := open(), open()
	w, err := reader.Watch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = w.Stop() }()
	if _, err := writer.Get(ctx, "team=a"); !errors.Is(err, store.ErrNotFound) {
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
		b, ok := w.Exhausted(map[string]string{"team": "a", "env": "ci"})
		return ok && b.OnExhausted == budget.Cancel
	})
	if _, ok := w.Exhausted(map[string]string{"team": "b"}); ok {
		t.Fatal("a label without a budget is exhausted")
	}
	if err := writer.Delete(ctx, "env=ci"); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 10*time.Second, "the watcher to see the deletion", func() bool {
		b, ok := w.Exhausted(map[string]string{"team": "a", "env": "ci"})
		return ok && b.Label == "team=a"
	})
}
