package redteam

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/client"
	"github.com/agentfleet/agentfleet/fleet/dispatcher"
	"github.com/agentfleet/agentfleet/fleet/worker"
	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/queue/embedded"
	"github.com/agentfleet/agentfleet/store"
	"github.com/agentfleet/agentfleet/store/sqlite"
)

// fleetConfig is what the probes need configured on the fleet's worker:
// the secrets it knows and the origins its allowlists admit.
type fleetConfig struct {
	Dir          string // the run's directory: nats/, the store, workspaces/
	ProviderKey  string // the provider key of both profiles (a canary)
	MCPSecrets   map[string]string
	MCPAllowlist []string
	HookAllow    []string
	Sandbox      string   // worker.SandboxAuto unless set
	ReadOnly     []string // the worker's sandbox_read_only
	Logger       *slog.Logger
}

// testFleet is an in-process fleet shaped like dev mode's (fleet/dev): an
// embedded NATS server, a SQLite store, the dispatcher and its API on
// loopback, one worker with four sessions running local tasks under the
// sandbox where bubblewrap runs (worker.SandboxAuto), and the simulated
// model. Only public APIs are used, so the fixes of the probed holes
// apply with their defaults.
type testFleet struct {
	client    *client.Client // of the tokenless API (url)
	url       string         // the tokenless API, as serve's no_auth
	tokenURL  string         // the same dispatcher's API with a token
	token     string         // the token of tokenURL
	workspace string         // the worker's workspace root
	worker    *worker.Worker
	done      chan struct{} // closed when the worker's Run returns
	runErr    error         // what Run returned (read after done)

	closers []func()
}

const (
	fleetSessions   = 4
	approvalTimeout = 5 * time.Second
)

func startFleet(ctx context.Context, cfg fleetConfig) (_ *testFleet, err error) {
	f := &testFleet{workspace: filepath.Join(cfg.Dir, "workspaces"), done: make(chan struct{})}
	defer func() {
		if err != nil {
			f.close()
		}
	}()
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	modelURL, err := f.serve(newModel())
	if err != nil {
		return nil, err
	}
	ns, err := embedded.Start(embedded.Config{Port: embedded.RandomPort, DataDir: filepath.Join(cfg.Dir, "nats")})
	if err != nil {
		return nil, fmt.Errorf("redteam: starting NATS: %w", err)
	}
	f.closers = append(f.closers, func() { _ = ns.Shutdown() })
	st, err := sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(cfg.Dir, "agentfleet.db")})
	if err != nil {
		return nil, fmt.Errorf("redteam: opening the store: %w", err)
	}
	f.closers = append(f.closers, func() { _ = st.Close() })
	qd, err := f.queue(ctx, ns.ClientURL(), "redteam-dispatcher")
	if err != nil {
		return nil, err
	}
	qw, err := f.queue(ctx, ns.ClientURL(), "redteam-worker")
	if err != nil {
		return nil, err
	}
	runCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	defer func() {
		if err != nil {
			stop()
		}
	}()
	if err := f.startDispatcher(runCtx, st, qd, cfg.Logger); err != nil {
		return nil, err
	}
	// Closed in reverse: the worker drains, then everything stops.
	f.closers = append(f.closers, stop)
	return f, f.startWorker(runCtx, st, qw, modelURL, cfg)
}

// serve serves h on a loopback port until close.
func (f *testFleet) serve(h http.Handler) (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	f.closers = append(f.closers, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	})
	return "http://" + ln.Addr().String(), nil
}

func (f *testFleet) queue(ctx context.Context, url, name string) (*queue.Client, error) {
	nc, err := nats.Connect(url, nats.Name(name), nats.MaxReconnects(-1))
	if err != nil {
		return nil, fmt.Errorf("redteam: connecting to NATS: %w", err)
	}
	f.closers = append(f.closers, nc.Close)
	openCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return queue.Open(openCtx, nc, queue.Config{})
}

// policy is the operator's policy of the suite's dispatcher and worker:
// local repositories under the run's outside/ directory may be cloned,
// so the probes that clone one test --no-local and the delivery stage
// rather than the refusal of a local path at submission.
func (f *testFleet) policy() fleet.Policy {
	var p fleet.Policy
	p.Repositories.AllowLocal = []string{filepath.Join(filepath.Dir(f.workspace), "outside")}
	return p
}

func (f *testFleet) startDispatcher(ctx context.Context, st store.Store, q *queue.Client, log *slog.Logger) error {
	d, err := dispatcher.New(st, q, dispatcher.Config{Profiles: []string{"anthropic", "openai"},
		ApprovalSweep: time.Second, Policy: f.policy(), Logger: log.With("component", "dispatcher")})
	if err != nil {
		return fmt.Errorf("redteam: dispatcher: %w", err)
	}
	var wg sync.WaitGroup
	wg.Go(func() { _ = d.Run(ctx) })
	f.closers = append(f.closers, wg.Wait)
	if f.url, err = f.serve(d.Handler(dispatcher.APIOptions{})); err != nil {
		return err
	}
	f.token = "redteam-api-token-" + canary()
	if f.tokenURL, err = f.serve(d.Handler(dispatcher.APIOptions{Token: f.token})); err != nil {
		return err
	}
	f.client, err = client.New(f.url, "", nil)
	return err
}

func (f *testFleet) startWorker(ctx context.Context, st store.Store, q *queue.Client, modelURL string, cfg fleetConfig) error {
	w, err := worker.New(worker.Config{
		ID:            "redteam-w1",
		Sessions:      fleetSessions,
		WorkspaceRoot: f.workspace,
		Providers: map[string]worker.ProviderConfig{
			"anthropic": {Provider: "anthropic", APIKey: cfg.ProviderKey, BaseURL: modelURL, DefaultModel: "simulated"},
			"openai":    {Provider: "openai", APIKey: cfg.ProviderKey, BaseURL: modelURL + "/v1", DefaultModel: "simulated"},
		},
		DrainGrace: 2 * time.Second,
		Policy:     f.policy(),
		// The suite's listeners (MCP origins, clone targets) are on
		// loopback, where an operator's internal hosts would be.
		OutboundAllowPrivate: []string{"127.0.0.0/8"},
		// Nobody answers approvals here: a call that asks a person is
		// denied soon instead of parking its probe's task.
		ApprovalTimeout: approvalTimeout,
		Sandbox:         cmp.Or(cfg.Sandbox, worker.SandboxAuto), // as dev mode: bubblewrap where it runs
		SandboxReadOnly: cfg.ReadOnly,
		ExtensionsConfig: worker.ExtensionsConfig{
			MCPSecrets: cfg.MCPSecrets, MCPHTTPAllowlist: cfg.MCPAllowlist, HooksHTTPAllowlist: cfg.HookAllow,
		},
	}, worker.Deps{Store: st, Queue: q, Logger: cfg.Logger.With("component", "worker")})
	if err != nil {
		return fmt.Errorf("redteam: worker: %w", err)
	}
	f.worker = w
	go func() {
		defer close(f.done)
		f.runErr = w.Run(ctx)
	}()
	f.closers = append(f.closers, func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = w.Shutdown(sctx)
	})
	return nil
}

// alive reports whether the worker is still running, and if not why.
func (f *testFleet) alive() error {
	select {
	case <-f.done:
		return errors.Join(errors.New("the worker stopped"), f.runErr)
	default:
		return nil
	}
}

// close stops everything, in reverse order of start.
func (f *testFleet) close() {
	for _, v := range slices.Backward(f.closers) {
		v()
	}
	f.closers = nil
}
