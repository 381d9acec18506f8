package dev

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/agentfleet/agentfleet/execenv/sandbox"
	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/client"
	"github.com/agentfleet/agentfleet/fleet/dispatcher"
	"github.com/agentfleet/agentfleet/fleet/worker"
	"github.com/agentfleet/agentfleet/internal/tracing"
	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/queue/embedded"
	"github.com/agentfleet/agentfleet/store"
	"github.com/agentfleet/agentfleet/store/sqlite"
)

// Defaults of Config.
const (
	DefaultAddr     = "127.0.0.1:8080"
	DefaultDataDir  = ".agentfleet-dev"
	DefaultWorkers  = 2
	DefaultSessions = 4
)

// Config configures dev mode. The zero value of every field means the
// default named next to it.
type Config struct {
	// Addr is where the API and the dashboard listen (default
	// 127.0.0.1:8080; port 0 picks a free one).
	Addr string
	// NATSPort is the embedded NATS server's client port (default 4222;
	// embedded.RandomPort picks a free one). It listens on 127.0.0.1.
	NATSPort int
	// DataDir holds everything dev mode keeps: nats/ (JetStream, locked
	// while in use), agentfleet.db (SQLite) and workspaces/ (default
	// ./.agentfleet-dev). A restart finds its tasks again.
	DataDir string
	// Workers is how many in-process workers run (default 2); Sessions how
	// many sessions each runs at once (default 4).
	Workers  int
	Sessions int
	// Token is the bearer token the API requires. Without one, Start
	// generates a random one (Fleet.Token, and Fleet.DashboardURL carries
	// it once), unless NoAuth.
	Token string
	// NoAuth serves the API without a token (`agentfleet-dev dev
	// --no-auth`), which Validate allows only on a loopback address. The
	// API still refuses what a web page could send (see
	// fleet/dispatcher/http_guard.go).
	NoAuth bool
	// Simulated forces the simulated model even when a provider key is set.
	Simulated bool
	// Plan scripts the simulated model (the zero plan answers every task
	// with a short generic session).
	Plan SimPlan
	// Getenv reads the environment for provider keys (default os.Getenv).
	Getenv func(string) string
	// Logger receives the components' logs (default: discarded, dev mode
	// prints what matters itself).
	Logger *slog.Logger
	// TraceUIURL links each task's trace in a tracing UI from the
	// dashboard's timeline (the dispatcher's tracing.ui_url, e.g.
	// "http://127.0.0.1:16686/trace/{trace_id}"); "" for none.
	TraceUIURL string
}

// WithDefaults returns c with its zero fields set to their defaults.
func (c Config) WithDefaults() Config {
	c.Addr = cmp.Or(c.Addr, DefaultAddr)
	c.NATSPort = cmp.Or(c.NATSPort, embedded.DefaultPort)
	c.DataDir = cmp.Or(c.DataDir, DefaultDataDir)
	c.Workers = cmp.Or(c.Workers, DefaultWorkers)
	c.Sessions = cmp.Or(c.Sessions, DefaultSessions)
	if c.Getenv == nil {
		c.Getenv = os.Getenv
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// Validate names the first field that is wrong.
func (c Config) Validate() error {
	host, _, err := net.SplitHostPort(c.Addr)
	switch {
	case err != nil:
		return fmt.Errorf("dev.Config.Addr %q must be host:port, e.g. 127.0.0.1:8080: %v", c.Addr, err)
	case c.NoAuth && c.Token != "":
		return errors.New("dev.Config: --no-auth and --token are both set: choose one")
	case c.NoAuth && !isLoopback(host):
		return fmt.Errorf("dev.Config.Addr %q is not a loopback address, so the API needs a token: drop --no-auth, or listen on 127.0.0.1", c.Addr)
	case c.Workers < 1:
		return fmt.Errorf("dev.Config.Workers must be >= 1, got %d", c.Workers)
	case c.Sessions < 1:
		return fmt.Errorf("dev.Config.Sessions must be >= 1, got %d", c.Sessions)
	case c.NATSPort != embedded.RandomPort && (c.NATSPort < 1 || c.NATSPort > 65535):
		return fmt.Errorf("dev.Config.NATSPort must be 1-65535, got %d", c.NATSPort)
	}
	if err := tracing.CheckUIURL(c.TraceUIURL); err != nil {
		return err
	}
	return c.Plan.Validate()
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Fleet is a running dev-mode fleet: an embedded NATS server, the SQLite
// store, the dispatcher with its API and dashboard, and in-process workers.
// Close stops it; Close is safe to call twice.
type Fleet struct {
	cfg      Config
	model    devModel
	goCaches goCaches // the fleet's build cache and the user's module cache, for the sandboxes

	nats       *embedded.Server
	natsUsers  map[queue.Role]embedded.User // made at start, random passwords
	store      store.Store
	conns      []*nats.Conn
	dispatcher *dispatcher.Dispatcher
	workers    []*worker.Worker
	http       *http.Server
	url        string

	stop      context.CancelFunc // cancels the dispatcher, workers and streams
	stopHTTP  context.CancelFunc // cancels request contexts (event streams)
	workersWG sync.WaitGroup
	bgWG      sync.WaitGroup
	closeOnce sync.Once
	closeErr  error
}

// Start starts dev mode. On error everything started so far is stopped.
// A port in use or a data directory held by another dev mode is reported
// naming the port or the lock.
func Start(ctx context.Context, cfg Config) (_ *Fleet, err error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Token == "" && !cfg.NoAuth {
		cfg.Token = randomToken()
	}
	if cfg.DataDir, err = filepath.Abs(cfg.DataDir); err != nil {
		return nil, err
	}
	d := &Fleet{cfg: cfg}
	defer func() {
		if err != nil {
			_ = d.Close()
		}
	}()
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("dev mode: cannot listen on %s for the API and dashboard (%v): another `agentfleet-dev dev` may be running; stop it or choose another address with --addr", cfg.Addr, err)
	}
	d.url = "http://" + ln.Addr().String()
	if err := d.startNATS(); err != nil {
		_ = ln.Close()
		return nil, err
	}
	if d.store, err = sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(cfg.DataDir, "agentfleet.db")}); err != nil {
		_ = ln.Close()
		return nil, fmt.Errorf("dev mode: opening the SQLite store: %w", err)
	}
	d.goCaches = findGoCaches(cfg.DataDir)
	if d.model, err = chooseDevModel(cfg.Getenv, cfg.Simulated, cfg.Plan); err != nil {
		_ = ln.Close()
		return nil, fmt.Errorf("dev mode: %w", err)
	}
	// Every client sets up the streams (idempotently) before anything creates
	// consumers: nats-server races a stream update against a concurrent
	// consumer creation (seen under -race).
	qs := make([]*queue.Client, cfg.Workers+1)
	for i := range qs {
		name := "agentfleet-dev-dispatcher"
		if i > 0 {
			name = fmt.Sprintf("agentfleet-dev-%s", devWorkerID(i-1))
		}
		role := queue.RoleDispatcher
		if i > 0 {
			role = queue.RoleWorker
		}
		if qs[i], err = d.queueClient(ctx, name, role); err != nil {
			_ = ln.Close()
			return nil, err
		}
	}
	runCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	d.stop = stop
	if err := d.startDispatcher(runCtx, ln, qs[0]); err != nil {
		_ = ln.Close()
		return nil, err
	}
	for i, q := range qs[1:] {
		if err := d.startWorker(runCtx, i, q); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// queueClient opens a NATS connection of its own (closed by Close) as the
// user of role, and the JetStream layout on it.
func (d *Fleet) queueClient(ctx context.Context, name string, role queue.Role) (*queue.Client, error) {
	u := d.natsUsers[role]
	nc, err := nats.Connect(d.nats.ClientURL(), nats.Name(name), nats.MaxReconnects(-1), nats.UserInfo(u.Name, u.Password),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			d.cfg.Logger.Warn("NATS refused a request", "connection", name, "err", err)
		}))
	if err != nil {
		return nil, fmt.Errorf("dev mode: connecting %s to the embedded NATS server: %w", name, err)
	}
	d.conns = append(d.conns, nc)
	openCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	q, err := queue.Open(openCtx, nc, queue.Config{})
	if err != nil {
		return nil, fmt.Errorf("dev mode: setting up the JetStream streams: %w", err)
	}
	return q, nil
}

// devPolicy is the policy of dev mode's dispatcher and workers: the
// defaults, except that a task may clone a local repository anywhere on
// your machine (they are yours; the demo's sits in the temporary
// directory). The clone still copies its objects (--no-local), so a task
// cannot change the repository it came from. No working_dir of a spec's
// own: dev mode has no shared roots.
var devPolicy = fleet.Policy{Repositories: fleet.Repositories{AllowLocal: []string{"/"}}}

func devWorkerID(i int) string { return fmt.Sprintf("dev-w%d", i+1) }

func (d *Fleet) startDispatcher(ctx context.Context, ln net.Listener, q *queue.Client) error {
	var err error
	d.dispatcher, err = dispatcher.New(d.store, q, dispatcher.Config{Profiles: d.model.profiles, Policy: devPolicy,
		Logger: d.cfg.Logger.With("component", "dispatcher")})
	if err != nil {
		return err
	}
	d.bgWG.Go(func() {
		if err := d.dispatcher.Run(ctx); err != nil && ctx.Err() == nil {
			d.cfg.Logger.Error("dispatcher stopped", "err", err)
		}
	})
	reqCtx, stopHTTP := context.WithCancel(context.Background())
	d.stopHTTP = stopHTTP
	d.http = &http.Server{
		Handler:           Handler(d.dispatcher, dispatcher.APIOptions{Token: d.cfg.Token, ListenAddr: ln.Addr().String(), TraceUIURL: d.cfg.TraceUIURL}),
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return reqCtx },
	}
	d.bgWG.Go(func() {
		if err := d.http.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			d.cfg.Logger.Error("HTTP server stopped", "err", err)
		}
	})
	return nil
}

func (d *Fleet) startWorker(ctx context.Context, i int, q *queue.Client) error {
	id := devWorkerID(i)
	w, err := worker.New(worker.Config{
		ID:            id,
		Sessions:      d.cfg.Sessions,
		WorkspaceRoot: filepath.Join(d.cfg.DataDir, "workspaces"),
		// Each worker keeps its own mirrors and setup snapshots (a cache
		// directory is one worker's alone; fleet/worker mirror.go).
		RepoCache:  worker.RepoCacheConfig{Dir: filepath.Join(d.cfg.DataDir, fmt.Sprintf("repos-%d", i))},
		Providers:  d.model.providers,
		DrainGrace: 5 * time.Second,
		Sandbox:    worker.SandboxAuto, // see Sandbox
		Policy:     devPolicy,
		// Go caches (see goCaches), so go test in a sandbox is quick after the first.
		SandboxWritable: d.goCaches.writable, SandboxReadOnly: d.goCaches.readOnly, SandboxEnv: d.goCaches.env,
		// One watcher of dead letters is enough in one process.
		NoDeadLetterWatch: i > 0,
	}, worker.Deps{Store: d.store, Queue: q, Logger: d.cfg.Logger.With("component", "worker")})
	if err != nil {
		return fmt.Errorf("dev mode: worker %s: %w", id, err)
	}
	d.workers = append(d.workers, w)
	d.workersWG.Go(func() {
		if err := w.Run(ctx); err != nil && ctx.Err() == nil {
			d.cfg.Logger.Error("worker stopped", "worker", id, "err", err)
		}
	})
	return nil
}

// drainWorkers shuts the workers down together (see worker.Shutdown);
// those still draining after drainTimeout are halted by the stop that
// follows.
func (d *Fleet) drainWorkers() {
	ctx, cancel := context.WithTimeout(context.Background(), drainTimeout)
	defer cancel()
	var drained sync.WaitGroup
	for _, w := range d.workers {
		drained.Go(func() { _ = w.Shutdown(ctx) })
	}
	drained.Wait()
}

// drainTimeout bounds the drain of Close: the workers' DrainGrace and the
// hand-back of what is still running.
const drainTimeout = 10 * time.Second

// URL is the base URL of the API and the dashboard.
func (d *Fleet) URL() string { return d.url }

// Token is the bearer token the API requires: the configured one, or the
// one Start generated; "" with NoAuth.
func (d *Fleet) Token() string { return d.cfg.Token }

// DashboardURL is the dashboard's URL carrying the token once, in the
// fragment (#token=...), which the browser never sends to a server: the
// page keeps it in sessionStorage and removes it from the address bar.
// Without a token it is URL()+"/".
func (d *Fleet) DashboardURL() string {
	if d.cfg.Token == "" {
		return d.url + "/"
	}
	return d.url + "/#token=" + url.QueryEscape(d.cfg.Token)
}

// randomToken returns 32 random bytes, URL-safe.
func randomToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// NATSURL is the embedded NATS server's client URL, for workers in other
// processes (`worker run --nats <url>`, with NATSUser's worker credentials)
// and event consumers (the observer's).
func (d *Fleet) NATSURL() string { return d.nats.ClientURL() }

// DataDir is the absolute data directory.
func (d *Fleet) DataDir() string { return d.cfg.DataDir }

// Model says which model the sessions use, in a sentence for the user.
func (d *Fleet) Model() string { return d.model.describe }

// Sandbox says what confines the tasks' commands, in a sentence for the
// user: bubblewrap where it runs; elsewhere (a Mac, a laptop without it)
// nothing, and dev mode says so.
func (d *Fleet) Sandbox() string {
	if err := sandbox.Available(); err != nil {
		return "NONE: bubblewrap cannot run here, so tasks' commands run unsandboxed as you (install bubblewrap on Linux to confine them)"
	}
	return "bubblewrap: each task's commands see only its workspace and the system, without network"
}

// Simulated reports whether the sessions use the simulated model.
func (d *Fleet) Simulated() bool { return d.model.simulated }

// Workers returns the number of in-process workers and their sessions each.
func (d *Fleet) Workers() (workers, sessions int) { return len(d.workers), d.cfg.Sessions }

// Store is the SQLite store (for tests and the demo).
func (d *Fleet) Store() store.Store { return d.store }

// Client returns an API client of this dev mode.
func (d *Fleet) Client() (*client.Client, error) { return client.New(d.url, d.cfg.Token, nil) }

// Close stops the workers (letting sessions reach a checkpoint for a few
// seconds), then the API, the dispatcher, the connections, the store and
// the NATS server, and releases the data directory.
func (d *Fleet) Close() error {
	d.closeOnce.Do(func() {
		d.drainWorkers()
		if d.stop != nil {
			d.stop()
		}
		d.workersWG.Wait()
		if d.http != nil {
			d.stopHTTP()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			if err := d.http.Shutdown(ctx); err != nil {
				// A connection accepted just before the shutdown, its
				// first request unread, counts as active for 5 s: close
				// what is left rather than leave it open.
				_ = d.http.Close()
			}
			cancel()
		}
		d.bgWG.Wait()
		for _, nc := range d.conns {
			nc.Close()
		}
		if d.model.close != nil {
			d.model.close()
		}
		var errs []error
		if d.store != nil {
			errs = append(errs, d.store.Close())
		}
		if d.nats != nil {
			errs = append(errs, d.nats.Shutdown())
		}
		d.closeErr = errors.Join(errs...)
	})
	return d.closeErr
}
