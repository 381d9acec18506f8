package budget

// Has reports whether label ("key=value") has a budget, spent or not: a
// task carrying it has its cost counted (see fleet/internal/taskops
// CostCounted).
func (w *Watcher) Has(label string) bool {
	w.mu.RLock()
	defer w.mu.RUnlock()
	_, ok := w.budgets[label]
	return ok
}
