package budget

// Has reports whether label ("key=value") has a budget, spent or not,
// fleet-wide or in any tenant: a task carrying it has its cost counted
// (see fleet/internal/taskops CostCounted). A tenant's budget of every
// task (AllTasks) is not a label's and does not count here.
func (w *Watcher) Has(label string) bool {
	w.mu.RLock()
	defer w.mu.RUnlock()
	for _, b := range w.budgets {
		if b.Label == label {
			return true
		}
	}
	return false
}

// HasTenant reports whether tenant has a budget of every task (AllTasks):
// each of its tasks has its cost counted.
func (w *Watcher) HasTenant(tenant string) bool {
	if tenant == "" {
		return false
	}
	w.mu.RLock()
	defer w.mu.RUnlock()
	_, ok := w.budgets[keyOf(tenant, AllTasks)]
	return ok
}
