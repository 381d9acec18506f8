package budget

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"sync"

	"github.com/nats-io/nats.go/jetstream"
)

// Watcher keeps every budget in memory, current with the bucket, for a
// worker to consult at each claim and turn without a round trip.
type Watcher struct {
	w jetstream.KeyWatcher

	mu      sync.RWMutex
	budgets map[string]Budget // by label
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
		raw, err := base64.RawURLEncoding.DecodeString(e.Key())
		if err != nil {
			continue
		}
		w.mu.Lock()
		var b Budget
		if e.Operation() == jetstream.KeyValuePut && json.Unmarshal(e.Value(), &b) == nil {
			w.budgets[string(raw)] = b
		} else {
			delete(w.budgets, string(raw))
		}
		w.mu.Unlock()
	}
}

// Stop ends the watch.
func (w *Watcher) Stop() error { return w.w.Stop() }

// Exhausted returns the exhausted budget that applies to a task with these
// labels, if any (a cancel budget before a hold one).
func (w *Watcher) Exhausted(labels map[string]string) (Budget, bool) {
	if len(labels) == 0 {
		return Budget{}, false
	}
	w.mu.RLock()
	defer w.mu.RUnlock()
	var found Budget
	ok := false
	for k, v := range labels {
		b, has := w.budgets[k+"="+v]
		if has && b.Exhausted && (!ok || b.OnExhausted == Cancel) {
			found, ok = b, true
		}
	}
	return found, ok
}
