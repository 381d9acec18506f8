package worker

import (
	"context"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Handler serves /healthz (the process answers), /readyz (the worker pulls
// work and its store answers) and /metrics (Prometheus; served only when
// the worker made its own registry, else by the caller's).
func (w *Worker) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(rw http.ResponseWriter, _ *http.Request) {
		_, _ = rw.Write([]byte("ok\n"))
	})
	mux.HandleFunc("GET /readyz", func(rw http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		if !w.Ready() {
			http.Error(rw, "not ready: the worker is starting, draining or stopped", http.StatusServiceUnavailable)
			return
		}
		if err := w.st.Ping(ctx); err != nil {
			http.Error(rw, "not ready: store: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		_, _ = rw.Write([]byte("ready\n"))
	})
	if w.gatherer != nil {
		mux.Handle("GET /metrics", promhttp.HandlerFor(w.gatherer, promhttp.HandlerOpts{}))
	}
	return mux
}

// Gatherer returns the worker's own metrics registry, nil when the caller
// passed a Registerer.
func (w *Worker) Gatherer() prometheus.Gatherer { return w.gatherer }
