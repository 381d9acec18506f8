package dispatcher

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/fleet/dispatcher/webhook"
)

// runWebhooks runs the webhook notifier until the returned stop is
// called; a notifier that fails (NATS went away) is started again after a
// second.
func (d *Dispatcher) runWebhooks(ctx context.Context) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			if err := d.webhooks.Run(ctx); err != nil {
				d.log.Warn("webhooks stopped; restarting", "err", err)
			}
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
		}
	}()
	return func() { cancel(); <-done }
}

// webhookDeliveries serves the delivery log: GET
// /v1/webhooks/deliveries[?task_id=ID][&limit=N], newest first.
func (a *handlers) webhookDeliveries(w http.ResponseWriter, r *http.Request) {
	task := r.URL.Query().Get("task_id")
	if task != "" {
		if _, err := uuid.Parse(task); err != nil {
			badRequestf(w, "task_id", "must be a task id (a UUID)")
			return
		}
	}
	limit := 100
	if s := r.URL.Query().Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 1000 {
			badRequestf(w, "limit", "must be an integer from 1 to 1000")
			return
		}
		limit = n
	}
	out := []webhook.Delivery{}
	if a.webhooks != nil {
		out = append(out, a.webhooks.Deliveries(task, limit)...)
	}
	writeJSON(w, http.StatusOK, map[string]any{"deliveries": out})
}
