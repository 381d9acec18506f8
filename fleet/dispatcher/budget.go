package dispatcher

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/api"
	"github.com/agentfleet/agentfleet/fleet/budget"
	"github.com/agentfleet/agentfleet/fleet/internal/taskops"
	"github.com/agentfleet/agentfleet/store"
)

// DefaultBudgetCheckInterval is how often Run checks budgets against spend
// when Config.BudgetCheckInterval is 0.
const DefaultBudgetCheckInterval = 5 * time.Second

// budgets is the dispatcher's view of fleet/budget: the bucket, opened at
// first use, and its enforcer.
type budgets struct {
	mu   sync.Mutex
	book *budget.Book
}

// budgetBook opens the budgets bucket once.
func (d *Dispatcher) budgetBook(ctx context.Context) (*budget.Book, error) {
	d.budgets.mu.Lock()
	defer d.budgets.mu.Unlock()
	if d.budgets.book != nil {
		return d.budgets.book, nil
	}
	b, err := budget.Open(ctx, d.queue)
	if err != nil {
		return nil, err
	}
	d.budgets.book = b
	return b, nil
}

func (d *Dispatcher) enforcer(ctx context.Context) (*budget.Enforcer, error) {
	book, err := d.budgetBook(ctx)
	if err != nil {
		return nil, err
	}
	return &budget.Enforcer{Book: book, Spend: d.store, Actions: budgetActions{d}, Log: d.log}, nil
}

// runBudgets checks every budget each interval until ctx ends.
func (d *Dispatcher) runBudgets(ctx context.Context) {
	e, err := d.enforcer(ctx)
	if err != nil {
		if ctx.Err() == nil {
			d.log.Warn("budgets are not enforced: opening the budgets bucket failed", "err", err)
		}
		return
	}
	e.Run(ctx, d.cfg.BudgetCheckInterval)
}

// PutBudget sets the budget of a label (budget.AllTasks: every task) in
// tenant ("": fleet-wide) and checks it against the spend at once. A
// label no task carries is allowed; the answer says so.
func (d *Dispatcher) PutBudget(ctx context.Context, tenant, label string, req api.BudgetRequest) (api.Budget, error) {
	e, err := d.enforcer(ctx)
	if err != nil {
		return api.Budget{}, err
	}
	if _, err := e.Book.Put(ctx, budget.Budget{Tenant: tenant, Label: label, LimitUSD: req.LimitUSD, OnExhausted: req.OnExhausted}); err != nil {
		return api.Budget{}, err
	}
	b, err := e.Check(ctx, tenant, label)
	if err != nil {
		return api.Budget{}, err
	}
	out := apiBudget(b)
	tenants, labels, _ := budget.Filter(tenant, label)
	counts, err := d.store.CountTasks(ctx, store.CountTasksParams{Tenants: tenants, Labels: labels})
	if err != nil {
		return out, err
	}
	for _, n := range counts {
		out.Tasks += n
	}
	if out.Tasks == 0 {
		out.Note = fmt.Sprintf("no task carries the label %s yet; the budget applies to tasks submitted with it", label)
		if tenant != "" {
			out.Note = fmt.Sprintf("tenant %s has no task with the label %s yet; the budget applies to its tasks submitted with it", tenant, label)
		}
	}
	return out, nil
}

// GetBudget returns the budget of a label in tenant ("": fleet-wide);
// budget.ErrNotFound when it has none.
func (d *Dispatcher) GetBudget(ctx context.Context, tenant, label string) (api.Budget, error) {
	book, err := d.budgetBook(ctx)
	if err != nil {
		return api.Budget{}, err
	}
	b, err := book.Get(ctx, tenant, label)
	return apiBudget(b), err
}

// ListBudgets returns the budgets of tenants: nil is every budget,
// fleet-wide ones included; a list keeps to those tenants' budgets.
func (d *Dispatcher) ListBudgets(ctx context.Context, tenants []string) ([]api.Budget, error) {
	book, err := d.budgetBook(ctx)
	if err != nil {
		return nil, err
	}
	all, err := book.List(ctx)
	out := make([]api.Budget, 0, len(all))
	for _, b := range all {
		if tenants == nil || (b.Tenant != "" && slices.Contains(tenants, b.Tenant)) {
			out = append(out, apiBudget(b))
		}
	}
	return out, err
}

// DeleteBudget removes the budget of a label in tenant and releases its
// held tasks.
func (d *Dispatcher) DeleteBudget(ctx context.Context, tenant, label string) error {
	book, err := d.budgetBook(ctx)
	if err != nil {
		return err
	}
	if err := book.Delete(ctx, tenant, label); err != nil {
		return err
	}
	_, err = budgetActions{d}.Release(ctx, tenant, label)
	return err
}

func apiBudget(b budget.Budget) api.Budget {
	return api.Budget{Tenant: b.Tenant, Label: b.Label, LimitUSD: b.LimitUSD, OnExhausted: b.OnExhausted, SpentUSD: b.SpentUSD,
		Exhausted: b.Exhausted, CheckedAt: b.CheckedAt, UpdatedAt: b.UpdatedAt}
}

// budgetActions are budget.Actions over the dispatcher's store and queue.
type budgetActions struct{ d *Dispatcher }

// Release republishes the queued tasks of label that a budget held (error
// budget), one start message each; its id carries the task's attempts, so
// two dispatchers releasing the same hold publish it once.
func (a budgetActions) Release(ctx context.Context, tenant, label string) (int, error) {
	n := 0
	err := a.queuedOf(ctx, tenant, label, func(t store.Task) error {
		if t.Error != budget.Reason {
			return nil
		}
		spec, err := fleet.DecodeSpec(t.Spec)
		if err != nil {
			return fmt.Errorf("releasing task %s: %w", t.ID, err)
		}
		o := taskops.ReleaseMessage(t, spec, time.Now())
		res, err := a.d.queue.Send(ctx, o.To, o.Msg, o.MsgID)
		if err == nil && !res.Duplicate {
			n++
		}
		return err
	})
	if n > 0 {
		a.d.log.Info("budget: released held tasks", "tenant", tenant, "label", label, "tasks", n)
	}
	return n, err
}

// CancelQueued cancels the queued tasks of label (their subtrees too).
func (a budgetActions) CancelQueued(ctx context.Context, tenant, label string) (int, error) {
	n := 0
	err := a.queuedOf(ctx, tenant, label, func(t store.Task) error {
		_, err := a.d.Cancel(ctx, t.ID, budget.Reason)
		if errors.Is(err, ErrAlreadyFinished) || errors.Is(err, store.ErrNotFound) {
			return nil
		}
		if err == nil {
			n++
		}
		return err
	})
	if n > 0 {
		a.d.log.Info("budget: cancelled queued tasks", "tenant", tenant, "label", label, "tasks", n)
	}
	return n, err
}

// queuedOf calls f for every queued task of the budget's scope (label in
// tenant), page by page.
func (a budgetActions) queuedOf(ctx context.Context, tenant, label string, f func(store.Task) error) error {
	tenants, labels, err := budget.Filter(tenant, label)
	if err != nil {
		return err
	}
	p := store.ListTasksParams{States: []store.TaskState{store.TaskQueued}, Tenants: tenants, Labels: labels, Limit: 1000}
	for {
		page, err := a.d.store.ListTasks(ctx, p)
		if err != nil {
			return err
		}
		for _, t := range page.Tasks {
			if err := f(t); err != nil {
				return err
			}
		}
		if page.NextCursor == "" {
			return nil
		}
		p.Cursor = page.NextCursor
	}
}
