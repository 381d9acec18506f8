package bench

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

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
	js    jetstream.JetStream
	model *benchModel
}

// streamUse is what a stream holds.
type streamUse struct{ msgs, bytes uint64 }

// watchEvents opens the connection eventsStored reads the stream through.
func (f *benchFleet) watchEvents(url string) error {
	nc, err := nats.Connect(url, nats.MaxReconnects(0))
	if err != nil {
		return fmt.Errorf("bench: connect to NATS: %w", err)
	}
	f.onStop(nc.Close)
	f.js, err = jetstream.New(nc)
	return err
}

// eventsStored reads what the EVENTS stream holds.
func (f *benchFleet) eventsStored(ctx context.Context) (streamUse, error) {
	s, err := f.js.Stream(ctx, queue.DefaultEventsStream)
	if err != nil {
		return streamUse{}, fmt.Errorf("bench: EVENTS stream: %w", err)
	}
	st := s.CachedInfo().State
	return streamUse{msgs: st.Msgs, bytes: st.Bytes}, nil
}

func (f *benchFleet) stop() {
	for _, v := range slices.Backward(f.stops) {
		v()
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
	var ns *embedded.Server
	labelled(ctx, "nats", func() {
		ns, err = embedded.Start(embedded.Config{Port: embedded.RandomPort, DataDir: filepath.Join(cfg.Dir, "nats")})
	})
	if err != nil {
		return nil, fmt.Errorf("bench: start NATS: %w", err)
	}
	f.onStop(func() { _ = ns.Shutdown() })
	quiet := slog.New(slog.DiscardHandler)
	if labelled(ctx, "dispatcher", func() { err = f.startDispatcher(ctx, ns.ClientURL(), quiet) }); err != nil {
		return nil, err
	}
	if err := f.watchEvents(ns.ClientURL()); err != nil {
		return nil, err
	}
	var modelURL string
	labelled(ctx, "model", func() {
		if cfg.ProviderRPM > 0 {
			f.rate = sim.NewRateLimit(cfg.ProviderRPM, 0)
		}
		f.model = &benchModel{latency: cfg.Latency, rounds: cfg.Rounds, window: cfg.ContextWindow, outputBytes: cfg.OutputBytes,
			tokens: cfg.StreamTokens, tokenInterval: cfg.TokenInterval, rate: f.rate}
		modelURL, err = f.listen(f.model)
	})
	if err != nil {
		return nil, err
	}
	workers := cfg.Workers
	if cfg.SubmitOnly {
		workers = 0
	}
	for i := range workers {
		a := newBenchWorkerArgs(cfg, i, ns.ClientURL(), modelURL)
		if cfg.WorkerProcesses {
			err = f.startProcess(cfg.WorkerCommand, a)
		} else {
			labelled(ctx, "worker", func() { f.startWorker(a, quiet) })
		}
		if err != nil {
			return nil, err
		}
	}
	return f, nil
}

// labelled runs fn with the pprof label part=<part>, which the goroutines
// it starts inherit: a CPU profile of the bench (--cpuprofile) splits by
// part with `go tool pprof -tags`.
func labelled(ctx context.Context, part string, fn func()) {
	pprof.Do(ctx, pprof.Labels("part", part), func(context.Context) { fn() })
}

// startDispatcher runs the dispatcher and its API on a loopback port.
func (f *benchFleet) startDispatcher(ctx context.Context, natsURL string, log *slog.Logger) error {
	q, err := f.connect(ctx, natsURL, "bench-dispatcher")
	if err != nil {
		return err
	}
	d, err := dispatcher.New(f.store, q, dispatcher.Config{Logger: log})
	if err != nil {
		return err
	}
	runCtx, stopRun := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() { defer close(ran); _ = d.Run(runCtx) }()
	f.onStop(func() { stopRun(); <-ran })
	f.url, err = f.listen(d.Handler(dispatcher.APIOptions{}))
	return err
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
// and CPU seconds, and the store writes of them all.
func (f *benchFleet) stopProcesses() (rssMB, cpu []float64, writes int64, err error) {
	var errs []error
	for _, p := range f.procs {
		res, rss, err := p.stop()
		errs = append(errs, err)
		rssMB = append(rssMB, rss)
		if ps := p.cmd.ProcessState; ps != nil {
			cpu = append(cpu, (ps.UserTime() + ps.SystemTime()).Seconds())
		}
		writes += res.StoreWrites
	}
	return rssMB, cpu, writes, errors.Join(errs...)
}
