package dispatcher

import (
	"context"
	"errors"
	"maps"
	"slices"
	"time"

	"github.com/agentfleet/agentfleet/store"
)

// The audit log is retained per tenant (the Audit window of
// RetentionPolicy, see retention.go for the rules): each hour, and once
// at start, Run deletes the entries of each tenant with a window of its
// own that are older than it, then, by the default window, the entries
// older than that in every other tenant and those with no tenant. A
// negative window keeps its entries; when every window is negative
// nothing is pruned.

// auditRetention is c.Retention with its default policy's Audit window
// resolved: retention.default.audit, else AuditRetention.
func (c Config) auditRetention() Retention {
	r := c.Retention
	if r.Default.Audit == 0 {
		r.Default.Audit = c.AuditRetention
	}
	return r
}

// auditWindows returns the default audit window and the tenants whose
// policy sets an audit window of its own (sorted), with their windows.
func (c Config) auditWindows() (def time.Duration, tenants []string, windows map[string]time.Duration) {
	r := c.auditRetention()
	windows = map[string]time.Duration{}
	for t, p := range r.Tenants {
		if p.Audit != 0 {
			windows[t] = p.Audit
		}
	}
	return r.Default.Audit, slices.Sorted(maps.Keys(windows)), windows
}

// pruneAudit prunes the audit log every hour (and once at start) until
// ctx ends; it returns at once when every window keeps for ever.
func (d *Dispatcher) pruneAudit(ctx context.Context) {
	def, _, windows := d.cfg.auditWindows()
	if def <= 0 && !slices.ContainsFunc(slices.Collect(maps.Values(windows)), func(w time.Duration) bool { return w > 0 }) {
		return
	}
	t := time.NewTicker(time.Hour)
	defer t.Stop()
	for {
		n, err := d.pruneAuditOnce(ctx, time.Now())
		switch {
		case err != nil && ctx.Err() == nil:
			d.log.Warn("pruning the audit log", "err", err)
		case n > 0:
			d.log.Info("audit log pruned", "deleted", n, "retention", def)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// pruneAuditOnce deletes, as of now, the entries past their window and
// says how many; an error of one tenant's delete does not stop the
// others.
func (d *Dispatcher) pruneAuditOnce(ctx context.Context, now time.Time) (int64, error) {
	def, own, windows := d.cfg.auditWindows()
	var total int64
	var errs []error
	del := func(p store.DeleteAuditParams) {
		n, err := d.store.DeleteAudit(ctx, p)
		total += n
		errs = append(errs, err)
	}
	for _, t := range own {
		if w := windows[t]; w > 0 {
			del(store.DeleteAuditParams{Before: now.Add(-w), Tenants: []string{t}})
		}
	}
	if def > 0 {
		del(store.DeleteAuditParams{Before: now.Add(-def), ExceptTenants: own})
	}
	return total, errors.Join(errs...)
}
