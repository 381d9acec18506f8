package bench

import (
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

	"github.com/agentfleet/agentfleet/fleet/dispatcher"
	"github.com/agentfleet/agentfleet/llm/sim"
	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/queue/embedded"
)

// benchFleet is the fleet a benchmark starts: an embedded NATS server, the
// dispatcher and its API on a loopback port, the simulated model and the
// workers, in this process or (Config.WorkerProcesses) each in its
// own. stop takes it down in reverse order.
type benchFleet struct {
	url   string
	store *countingStore
	stops []func()
	procs []*benchProcess // the worker processes, if any
	rate  *sim.RateLimit  // the simulated provider's limit, with ProviderRPM
	died  chan error      // a worker process that exited before stopProcesses
}

func (f *benchFleet) stop() {
	for i := len(f.stops) - 1; i >= 0; i-- {
		f.stops[i]()
	}
}

func (f *benchFleet) onStop(fn func()) { f.stops = append(f.stops, fn) }

func startBenchFleet(ctx context.Context, cfg Config) (_ *benchFleet, err error) {
	f := &benchFleet{store: &countingStore{Store: cfg.Store}, died: make(chan error, cfg.Workers)}
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
	d, err := dispatcher.New(f.store, q, dispatcher.Config{Logger: quiet})
	if err != nil {
		return nil, err
	}
	runCtx, stopRun := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() { defer close(ran); _ = d.Run(runCtx) }()
	f.onStop(func() { stopRun(); <-ran })
	if f.url, err = f.listen(d.Handler(dispatcher.APIOptions{})); err != nil {
		return nil, err
	}
	if cfg.ProviderRPM > 0 {
		f.rate = sim.NewRateLimit(cfg.ProviderRPM, 0)
	}
	modelURL, err := f.listen(benchModel{latency: cfg.Latency, rounds: cfg.Rounds, rate: f.rate})
	if err != nil {
		return nil, err
	}
	for i := range cfg.Workers {
		a := newBenchWorkerArgs(cfg, i, ns.ClientURL(), modelURL)
		if cfg.WorkerProcesses {
			err = f.startProcess(cfg.WorkerCommand, a)
		} else {
			f.startWorker(a, quiet)
		}
		if err != nil {
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

// startWorker runs a worker in this process until stop.
func (f *benchFleet) startWorker(a benchWorkerArgs, log *slog.Logger) {
	wctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- runBenchWorker(wctx, a, f.store, log) }()
	f.onStop(func() {
		stop()
		if err := <-done; err != nil {
			log.Warn("bench worker", "err", err)
		}
	})
}

// startProcess starts a worker process, stopped on stop if stopProcesses
// has not stopped it before.
func (f *benchFleet) startProcess(command []string, a benchWorkerArgs) error {
	p, err := startBenchProcess(command, a, f.died)
	if err != nil {
		return err
	}
	f.procs = append(f.procs, p)
	f.onStop(func() { _, _, _ = p.stop() })
	return nil
}

// stopProcesses stops the worker processes and returns each one's peak RSS
// and the store writes of them all.
func (f *benchFleet) stopProcesses() (rssMB []float64, writes int64, err error) {
	var errs []error
	for _, p := range f.procs {
		res, rss, err := p.stop()
		errs = append(errs, err)
		rssMB = append(rssMB, rss)
		writes += res.StoreWrites
	}
	return rssMB, writes, errors.Join(errs...)
}
