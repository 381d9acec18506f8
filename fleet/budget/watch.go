package budget

import (
	"context"
	"sync"

	"github.com/nats-io/nats.go/jetstream"
)

// Watcher keeps every budget in memory, current with the bucket, for a
// worker to consult at each claim and turn without a round trip.
type Watcher struct {
	w jetstream.KeyWatcher

	mu      sync.RWMutex
	budgets map[string]Budget // by bucket key (keyOf)
	ready   chan struct{}
	once    sync.Once
}

// Watch starts watching the bucket until ctx ends or Stop; the returned
// watcher has read the bucket's current state.
func (bk *Book) Watch(ctx context.Context) (*Watcher, error) {
	kw, err := bk.kv.WatchAll(ctx)
	if err != nil {
		return nil, err
	}
	w := &Watcher{w: kw, budgets: map[string]Budget{}, ready: make(chan struct{})}
	go w.loop()
	select {
	case <-w.ready:
	case <-ctx.Done():
		_ = kw.Stop()
		return nil, ctx.Err()
	}
	return w, nil
}

func (w *Watcher) loop() {
	defer w.once.Do(func() { close(w.ready) })
	for e := range w.w.Updates() {
		if e == nil { // the initial values have all arrived
			w.once.Do(func() { close(w.ready) })
			continue
		}
		w.mu.Lock()
		if b, err := decode(e.Value()); e.Operation() == jetstream.KeyValuePut && err == nil {
			w.budgets[e.Key()] = b
		} else {
			delete(w.budgets, e.Key())
		}
		w.mu.Unlock()
	}
}

// Stop ends the watch.
func (w *Watcher) Stop() error { return w.w.Stop() }

// Exhausted returns the exhausted budget that applies to a task of tenant
// with these labels, if any (a cancel budget before a hold one): a
// fleet-wide budget of one of its labels, its tenant's budget of one of
// them, or its tenant's budget of every task.
func (w *Watcher) Exhausted(tenant string, labels map[string]string) (Budget, bool) {
	keys := make([]string, 0, 2*len(labels)+1)
	for k, v := range labels {
		keys = append(keys, keyOf("", k+"="+v))
		if tenant != "" {
			keys = append(keys, keyOf(tenant, k+"="+v))
		}
	}
	if tenant != "" {
		keys = append(keys, keyOf(tenant, AllTasks))
	}
	w.mu.RLock()
	defer w.mu.RUnlock()
	var found Budget
	ok := false
	for _, key := range keys {
		b, has := w.budgets[key]
		if has && b.Exhausted && (!ok || b.OnExhausted == Cancel) {
			found, ok = b, true
		}
	}
	return found, ok
}
