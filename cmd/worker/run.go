package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/viper"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/store"
	"github.com/agentfleet/agentfleet/store/postgres"
	"github.com/agentfleet/agentfleet/store/sqlite"
)

func init() { addCommand(newRunCmd) }

// runConfig is the whole configuration of `worker run`, read by viper from
// a file (--config), AGENTFLEET_* environment variables (AGENTFLEET_NATS_URL,
// AGENTFLEET_STORE_DSN, AGENTFLEET_WORKER_SESSIONS, ...: the key with dots
// as underscores) and flags, flags winning.
type runConfig struct {
	NATS   natsConfig         `mapstructure:"nats"`
	Store  storeConfig        `mapstructure:"store"`
	Queue  queueConfig        `mapstructure:"queue"`
	HTTP   httpConfig         `mapstructure:"http"`
	Log    logConfig          `mapstructure:"log"`
	Worker fleet.WorkerConfig `mapstructure:"worker"`
}

type natsConfig struct {
	URL          string `mapstructure:"url"`
	User         string `mapstructure:"user"`
	Password     string `mapstructure:"password"`
	Token        string `mapstructure:"token"`
	NKeySeedFile string `mapstructure:"nkey_seed_file"`
	CredsFile    string `mapstructure:"creds_file"`
	TLSCAFile    string `mapstructure:"tls_ca_file"`
	TLSCertFile  string `mapstructure:"tls_cert_file"`
	TLSKeyFile   string `mapstructure:"tls_key_file"`
}

type storeConfig struct {
	// DSN is a postgres:// URL, or the path of a SQLite database file.
	DSN string `mapstructure:"dsn"`
}

type queueConfig struct {
	Prefix     string        `mapstructure:"prefix"`
	AckWait    time.Duration `mapstructure:"ack_wait"`
	MaxDeliver int           `mapstructure:"max_deliver"`
}

type httpConfig struct {
	// Addr serves /healthz, /readyz and /metrics; "" or "off" disables it.
	Addr string `mapstructure:"addr"`
}

type logConfig struct {
	Format string `mapstructure:"format"` // json (default) or text
	Level  string `mapstructure:"level"`  // debug, info (default), warn, error
}

// runDefaults are the keys viper knows, so that AGENTFLEET_* variables
// reach them, with their defaults.
var runDefaults = map[string]any{
	"nats.url": "nats://127.0.0.1:4222", "nats.user": "", "nats.password": "", "nats.token": "",
	"nats.nkey_seed_file": "", "nats.creds_file": "", "nats.tls_ca_file": "", "nats.tls_cert_file": "", "nats.tls_key_file": "",
	"store.dsn": "", "queue.prefix": "", "queue.ack_wait": "0s", "queue.max_deliver": 0,
	"http.addr": ":8081", "log.format": "json", "log.level": "info",
	"worker.id": "", "worker.queues": []string{}, "worker.sessions": 0, "worker.workspace_root": "",
	"worker.keep_failed": "0s", "worker.allowed_profiles": []string{}, "worker.allowed_models": []string{},
	"worker.known_hosts_file": "", "worker.heartbeat_interval": "0s", "worker.stale_after": "0s",
	"worker.drain_grace": "0s", "worker.retry_backoff": "0s", "worker.max_retry_backoff": "0s",
	"worker.max_live_children": 0, "worker.no_dead_letter_watch": false,
}

// Validate names every wrong field.
func (c runConfig) Validate() error {
	var errs []error
	if c.Store.DSN == "" {
		errs = append(errs, errors.New("store.dsn is required: set AGENTFLEET_STORE_DSN (or --store-dsn) to a postgres:// URL or a SQLite file path"))
	}
	if c.NATS.URL == "" {
		errs = append(errs, errors.New("nats.url is required: set AGENTFLEET_NATS_URL (or --nats-url)"))
	}
	switch c.Log.Format {
	case "json", "text":
	default:
		errs = append(errs, fmt.Errorf("log.format must be json or text, got %q", c.Log.Format))
	}
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(c.Log.Level)); err != nil {
		errs = append(errs, fmt.Errorf("log.level must be debug, info, warn or error, got %q", c.Log.Level))
	}
	if c.Queue.AckWait < 0 || c.Queue.MaxDeliver < 0 {
		errs = append(errs, fmt.Errorf("queue.ack_wait and queue.max_deliver must be >= 0 (0 = default), got %s and %d", c.Queue.AckWait, c.Queue.MaxDeliver))
	}
	if err := c.Worker.WithDefaults().Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func newRunCmd() *cobra.Command {
	v := viper.New()
	var cfgFile string
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Pull tasks from NATS and run their agent sessions until SIGTERM",
		Long: `Run a worker: serve the configured queues (and this worker's own subject),
run sessions, record every turn in the store, publish events and answer control
requests. Configuration comes from --config (YAML, JSON or TOML), AGENTFLEET_*
environment variables (AGENTFLEET_NATS_URL, AGENTFLEET_STORE_DSN,
AGENTFLEET_WORKER_SESSIONS, ...) and flags. SIGTERM or SIGINT drains: pulling
stops, running sessions get worker.drain_grace to finish, the rest are handed
back to the queue, and the command exits 0.`,
		Example: `  AGENTFLEET_STORE_DSN=postgres://localhost/agentfleet worker run --queues default --sessions 8
  worker run --config worker.yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadRunConfig(v, cfgFile)
			if err != nil {
				return usageErrorf("%v", err)
			}
			return runWorker(cmd.Context(), cfg, cmd.ErrOrStderr())
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&cfgFile, "config", "", "configuration file (YAML, JSON or TOML)")
	fl.String("nats-url", "", "NATS server URL(s), comma-separated (nats.url)")
	fl.String("store-dsn", "", "postgres:// URL or SQLite file (store.dsn)")
	fl.StringSlice("queues", nil, "shared queues to serve (worker.queues)")
	fl.Int("sessions", 0, "concurrent sessions (worker.sessions)")
	fl.String("id", "", "worker id (worker.id)")
	fl.String("workspace-root", "", "directory of local workspaces (worker.workspace_root)")
	fl.String("http-addr", "", "address of /healthz, /readyz, /metrics (http.addr)")
	for flag, key := range map[string]string{"nats-url": "nats.url", "store-dsn": "store.dsn", "queues": "worker.queues",
		"sessions": "worker.sessions", "id": "worker.id", "workspace-root": "worker.workspace_root", "http-addr": "http.addr"} {
		_ = v.BindPFlag(key, fl.Lookup(flag))
	}
	return cmd
}

// loadRunConfig reads and validates the configuration.
func loadRunConfig(v *viper.Viper, file string) (runConfig, error) {
	for k, d := range runDefaults {
		v.SetDefault(k, d)
	}
	v.SetEnvPrefix("AGENTFLEET")
	v.SetEnvKeyReplacer(strings.NewReplacer(".", "_"))
	v.AutomaticEnv()
	if file != "" {
		v.SetConfigFile(file)
		if err := v.ReadInConfig(); err != nil {
			return runConfig{}, fmt.Errorf("reading --config %s: %w", file, err)
		}
	}
	var cfg runConfig
	if err := v.Unmarshal(&cfg); err != nil {
		return runConfig{}, fmt.Errorf("decoding the configuration: %w", err)
	}
	return cfg, cfg.Validate()
}

// runWorker wires the worker and runs it until ctx ends.
func runWorker(ctx context.Context, cfg runConfig, stderr interface{ Write([]byte) (int, error) }) error {
	log := newLogger(cfg.Log, stderr)
	nc, err := queue.Connect(queue.ConnectOptions{URL: cfg.NATS.URL, Name: "agentfleet-worker " + cfg.Worker.ID,
		User: cfg.NATS.User, Password: cfg.NATS.Password, Token: cfg.NATS.Token, NKeySeedFile: cfg.NATS.NKeySeedFile,
		CredsFile: cfg.NATS.CredsFile, TLSCAFile: cfg.NATS.TLSCAFile, TLSCertFile: cfg.NATS.TLSCertFile, TLSKeyFile: cfg.NATS.TLSKeyFile})
	if err != nil {
		return &exitError{code: 1, msg: err.Error()}
	}
	defer nc.Close()
	q, err := queue.Open(ctx, nc, queue.Config{Prefix: cfg.Queue.Prefix, AckWait: cfg.Queue.AckWait, MaxDeliver: cfg.Queue.MaxDeliver})
	if err != nil {
		return &exitError{code: 1, msg: err.Error()}
	}
	st, err := openStore(ctx, cfg.Store.DSN)
	if err != nil {
		return &exitError{code: 1, msg: err.Error()}
	}
	defer st.Close()
	w, err := fleet.NewWorker(cfg.Worker, fleet.WorkerDeps{Store: st, Queue: q, Logger: log})
	if err != nil {
		return usageErrorf("%v", err)
	}
	stopHTTP, err := serveHTTP(cfg.HTTP.Addr, w.Handler(), log)
	if err != nil {
		return &exitError{code: 1, msg: err.Error()}
	}
	defer stopHTTP()
	if err := w.Run(ctx); err != nil {
		return &exitError{code: 1, msg: err.Error()}
	}
	log.Info("worker stopped")
	return nil
}

func openStore(ctx context.Context, dsn string) (store.Store, error) {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		return postgres.New(ctx, postgres.Config{DSN: dsn})
	}
	return sqlite.Open(ctx, sqlite.Config{Path: dsn})
}

func newLogger(c logConfig, w interface{ Write([]byte) (int, error) }) *slog.Logger {
	var lvl slog.Level
	_ = lvl.UnmarshalText([]byte(c.Level))
	opts := &slog.HandlerOptions{Level: lvl}
	if c.Format == "text" {
		return slog.New(slog.NewTextHandler(w, opts))
	}
	return slog.New(slog.NewJSONHandler(w, opts))
}

// serveHTTP serves h on addr until the returned stop is called.
func serveHTTP(addr string, h http.Handler, log *slog.Logger) (stop func(), err error) {
	if addr == "" || addr == "off" {
		return func() {}, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("http.addr %s: %w", addr, err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("http server", "err", err)
		}
	}()
	log.Info("serving health and metrics", "addr", ln.Addr().String())
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		<-done
	}, nil
}
