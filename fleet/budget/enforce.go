package budget

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/agentfleet/agentfleet/store"
)

// Spend sums the cost of a label's sessions; store.Store satisfies it.
type Spend interface {
	Usage(ctx context.Context, p store.UsageParams) ([]store.UsageRow, error)
}

// Actions are what the dispatcher does for a budget that changed state.
type Actions interface {
	// Release republishes the queued tasks of label (AllTasks: every
	// task) in tenant ("": every tenant) held by a budget.
	Release(ctx context.Context, tenant, label string) (int, error)
	// CancelQueued cancels the queued tasks of label in tenant, with
	// reason budget.
	CancelQueued(ctx context.Context, tenant, label string) (int, error)
}

// Enforcer checks budgets against spend; see the package doc.
type Enforcer struct {
	Book    *Book
	Spend   Spend
	Actions Actions
	Log     *slog.Logger
	Now     func() time.Time // default time.Now

	mu    sync.Mutex
	swept map[string]time.Time // bucket key -> last release sweep of a budget that is not spent
}

// sweepEvery is how often a budget that is not spent looks for held tasks
// all the same (a release that a crash cut short, a hold that raced a
// raise).
const sweepEvery = time.Minute

// Run checks every interval until ctx ends.
func (e *Enforcer) Run(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if err := e.CheckAll(ctx); err != nil && ctx.Err() == nil {
			e.log().Warn("checking budgets", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// CheckAll checks every budget once.
func (e *Enforcer) CheckAll(ctx context.Context) error {
	all, err := e.Book.List(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for _, b := range all {
		if _, err := e.Check(ctx, b.Tenant, b.Label); err != nil && !errors.Is(err, ErrNotFound) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Check sums the spend of label in tenant ("": fleet-wide), records it, and acts on a change of
// state: held tasks are released when the budget is no longer exhausted;
// queued tasks are cancelled when a cancel budget becomes exhausted. It
// returns the budget as it stands after the check.
func (e *Enforcer) Check(ctx context.Context, tenant, label string) (Budget, error) {
	b, rev, err := e.Book.get(ctx, tenant, label)
	if err != nil {
		return Budget{}, err
	}
	spent, err := e.spent(ctx, tenant, label)
	if err != nil {
		return b, err
	}
	now := time.Now
	if e.Now != nil {
		now = e.Now
	}
	next, _, err := e.Book.record(ctx, b, rev, spent, now().UTC())
	if err != nil {
		return b, err
	}
	// A spent cancel budget cancels the queued tasks at every check (new
	// submissions included); a budget that is not spent releases held
	// tasks when it stops being spent, and once a sweepEvery regardless.
	switch {
	case next.OnExhausted == Cancel && next.Exhausted:
		_, err = e.Actions.CancelQueued(ctx, tenant, label)
	case !next.Exhausted && (b.Exhausted || e.sweepDue(keyOf(tenant, label), now())):
		_, err = e.Actions.Release(ctx, tenant, label)
	}
	return next, err
}

// sweepDue reports whether the held tasks of the budget at key should be looked for now,
// and notes that they are.
func (e *Enforcer) sweepDue(key string, now time.Time) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.swept == nil {
		e.swept = map[string]time.Time{}
	}
	if now.Sub(e.swept[key]) < sweepEvery {
		return false
	}
	e.swept[key] = now
	return true
}

// spent is the total cost of the budget's tasks.
func (e *Enforcer) spent(ctx context.Context, tenant, label string) (float64, error) {
	tenants, labels, err := Filter(tenant, label)
	if err != nil {
		return 0, err
	}
	rows, err := e.Spend.Usage(ctx, store.UsageParams{Labels: labels, Tenants: tenants})
	if err != nil || len(rows) == 0 {
		return 0, err
	}
	return rows[0].CostUSD, nil
}

func (e *Enforcer) log() *slog.Logger {
	if e.Log != nil {
		return e.Log
	}
	return slog.Default()
}

// Filter is the store filter of a budget's tasks: its tenant (nil for a
// fleet-wide budget: every tenant) and its label (nil for AllTasks).
func Filter(tenant, label string) (tenants []string, labels map[string]string, err error) {
	if err := ValidScope(tenant, label); err != nil {
		return nil, nil, err
	}
	if tenant != "" {
		tenants = []string{tenant}
	}
	if label != AllTasks {
		k, v, _ := ParseLabel(label)
		labels = map[string]string{k: v}
	}
	return tenants, labels, nil
}
