package fleet

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/queue/embedded"
)

// benchFleet is the in-process fleet of a benchmark: an embedded NATS
// server, the dispatcher and its API on a loopback port, the simulated model
// and the workers. stop takes it down in reverse order.
type benchFleet struct {
	url   string
	store *countingStore
	stops []func()
}

func (f *benchFleet) stop() {
	for i := len(f.stops) - 1; i >= 0; i-- {
		f.stops[i]()
	}
}

func (f *benchFleet) onStop(fn func()) { f.stops = append(f.stops, fn) }

func startBenchFleet(ctx context.Context, cfg BenchConfig) (_ *benchFleet, err error) {
	f := &benchFleet{store: &countingStore{Store: cfg.Store}}
	defer func() {
		if err != nil {
			f.stop()
		}
	}()
	ns, err := embedded.Start(embedded.Config{Port: embedded.RandomPort, DataDir: filepath.Join(cfg.Dir, "nats")})
	if err != nil {
		return nil, fmt.Errorf("bench: start NATS: %w", err)
	}
	f.onStop(func() { _ = ns.Shutdown() })
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	q, err := f.connect(ctx, ns.ClientURL(), "bench-dispatcher")
	if err != nil {
		return nil, err
	}
	d, err := NewDispatcher(f.store, q, DispatcherConfig{Logger: quiet})
	if err != nil {
		return nil, err
	}
	runCtx, stopRun := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() { defer close(ran); _ = d.Run(runCtx) }()
	f.onStop(func() { stopRun(); <-ran })
	if f.url, err = f.listen(d.Handler(APIOptions{})); err != nil {
		return nil, err
	}
	modelURL, err := f.listen(benchModel{latency: cfg.Latency, rounds: cfg.Rounds})
	if err != nil {
		return nil, err
	}
	for i := range cfg.Workers {
		if err := f.startWorker(ctx, ns.ClientURL(), i, cfg, modelURL, quiet); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// connect opens a NATS connection and a queue client, closed on stop.
func (f *benchFleet) connect(ctx context.Context, url, name string) (*queue.Client, error) {
	nc, err := queue.Connect(queue.ConnectOptions{URL: url, Name: name}, nats.MaxReconnects(0))
	if err != nil {
		return nil, fmt.Errorf("bench: connect to NATS: %w", err)
	}
	f.onStop(nc.Close)
	return queue.Open(ctx, nc, queue.Config{})
}

// listen serves h on a loopback port and returns its URL.
func (f *benchFleet) listen(h http.Handler) (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("bench: listen: %w", err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(ln) }()
	f.onStop(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			_ = srv.Close()
		}
		<-done
	})
	return "http://" + ln.Addr().String(), nil
}

func (f *benchFleet) startWorker(ctx context.Context, natsURL string, i int, cfg BenchConfig, modelURL string, log *slog.Logger) error {
	q, err := f.connect(ctx, natsURL, fmt.Sprintf("bench-worker-%d", i))
	if err != nil {
		return err
	}
	wc := WorkerConfig{
		ID:             fmt.Sprintf("bench-w%d", i),
		Sessions:       cfg.Slots,
		WorkspaceRoot:  filepath.Join(cmp.Or(cfg.WorkspaceRoot, cfg.Dir), fmt.Sprintf("ws-%d", i)),
		Providers:      map[string]ProviderConfig{"anthropic": {APIKey: "bench", BaseURL: modelURL, DefaultModel: "bench-model"}},
		LLMConcurrency: map[string]int{"anthropic": cfg.Slots},
		KeepFailed:     -1,
	}
	wc.Retry.MaxAttempts = 1
	w, err := NewWorker(wc, WorkerDeps{Store: f.store, Queue: q, Logger: log})
	if err != nil {
		return fmt.Errorf("bench: worker %d: %w", i, err)
	}
	wctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(wctx) }()
	f.onStop(func() {
		stop()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			log.Warn("bench worker", "err", err)
		}
	})
	return nil
}
