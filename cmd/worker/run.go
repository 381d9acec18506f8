package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/viper"

	"github.com/agentfleet/agentfleet/cmd/internal/cli"
	"github.com/agentfleet/agentfleet/fleet/models"
	"github.com/agentfleet/agentfleet/fleet/worker"
	"github.com/agentfleet/agentfleet/queue"
)

func init() { addCommand(newRunCmd) }

// runConfig is the whole configuration of `worker run`, read by viper from
// a file (--config), AGENTFLEET_* environment variables (the key in upper
// case with dots as underscores: nats.url is AGENTFLEET_NATS_URL, sessions
// is AGENTFLEET_SESSIONS) and flags, flags winning. database_url, prefix,
// listen, log_format, log_level, queues and nats.* mean what they mean to
// `dispatcher serve`; the worker's own tunables are worker.Config's,
// at the top level. The zero value of every field means its default.
type runConfig struct {
	// DatabaseURL is a postgres:// URL, or the path of a SQLite database file.
	DatabaseURL string `mapstructure:"database_url"`
	// StartupWait is how long the worker waits at start for NATS and the
	// store to answer (default 2 min; negative: not at all).
	StartupWait time.Duration `mapstructure:"startup_wait"`
	// Prefix is the subject prefix, the same as the dispatcher's (default agentfleet).
	Prefix string `mapstructure:"prefix"`
	// Listen serves /healthz, /readyz and /metrics (default :9090); "off" disables it.
	Listen    string         `mapstructure:"listen"`
	LogFormat string         `mapstructure:"log_format"` // json (default) or text
	LogLevel  string         `mapstructure:"log_level"`  // debug, info (default), warn, error
	NATS      cli.NATSConfig `mapstructure:"nats"`
	// Tracing is the sampling of OpenTelemetry traces (cli.TracingConfig).
	Tracing cli.TracingConfig `mapstructure:"tracing"`

	worker.Config `mapstructure:",squash"`
}

// WithDefaults fills the zero fields the command owns; worker.New fills
// the worker's (worker.Config.WithDefaults).
func (c runConfig) WithDefaults() runConfig {
	if c.Listen == "" {
		c.Listen = ":9090"
	}
	if c.LogFormat == "" {
		c.LogFormat = "json"
	}
	if c.LogLevel == "" {
		c.LogLevel = "info"
	}
	c.NATS = c.NATS.WithDefaults()
	return c
}

// Validate names every wrong field.
func (c runConfig) Validate() error {
	var errs []error
	if c.DatabaseURL == "" {
		errs = append(errs, errors.New("database_url is required: set AGENTFLEET_DATABASE_URL (or --database-url) to a postgres:// URL or a SQLite file path"))
	}
	if c.Listen != "off" {
		if _, _, err := net.SplitHostPort(c.Listen); err != nil {
			errs = append(errs, fmt.Errorf("listen %q must be host:port, :port or off (AGENTFLEET_LISTEN, --listen)", c.Listen))
		}
	}
	if err := cli.CheckLogging(c.LogFormat, c.LogLevel); err != nil {
		errs = append(errs, err)
	}
	if err := c.NATS.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := c.Config.WithDefaults().Validate(); err != nil {
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
environment variables (AGENTFLEET_DATABASE_URL, AGENTFLEET_NATS_URL,
AGENTFLEET_NATS_REPLICAS, AGENTFLEET_SESSIONS, ...: the key in upper case,
dots as underscores) and flags, flags winning. SIGTERM or SIGINT drains:
pulling stops, running sessions get drain_grace to finish, the rest are handed
back to the queue, and the command exits 0.`,
		Example: `  AGENTFLEET_DATABASE_URL=postgres://localhost/agentfleet worker run --queues default --sessions 8
  worker run --config worker.yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadRunConfig(v, cfgFile, os.Getenv)
			if err != nil {
				return usageErrorf("%v", err)
			}
			return runWorker(cmd.Context(), cfg, cmd.ErrOrStderr())
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&cfgFile, "config", "", "configuration file (YAML, JSON or TOML)")
	cli.CommonFlags(fl)
	fl.StringSlice("queues", nil, "shared queues to serve (queues, default default)")
	fl.StringSlice("tenants", nil, "tenants whose tasks this worker runs, a worker pool (tenants, default every tenant)")
	fl.Int("sessions", 0, "concurrent sessions (sessions, default 4)")
	fl.String("worker-id", "", "worker id (worker_id, default host name and pid)")
	fl.String("workspace-root", "", "directory of local workspaces (workspace_root)")
	fl.String("listen", "", "address of /healthz, /readyz, /metrics, or off (listen, default :9090)")
	cli.BindFlags(v, fl)
	return cmd
}

// loadRunConfig reads the configuration (file, AGENTFLEET_* variables,
// flags), then fills the providers the configuration leaves unset from the
// model variables dev mode reads too (models.ApplyEnv:
// AGENTFLEET_LLM_BASE_URL, AGENTFLEET_MODEL, AGENTFLEET_LLM_API_KEY).
func loadRunConfig(v *viper.Viper, file string, getenv func(string) string) (runConfig, error) {
	cfg, err := cli.Load[runConfig](v, file)
	if err != nil {
		return cfg, err
	}
	cfg.Providers, err = models.ApplyEnv(cfg.Providers, getenv)
	return cfg, err
}

// runWorker wires the worker and runs it until ctx ends.
func runWorker(ctx context.Context, cfg runConfig, stderr io.Writer) error {
	log := cli.NewLogger(cfg.LogFormat, cfg.LogLevel, stderr)
	stopTracing, err := cli.SetupTracing(ctx, "agentfleet-worker", cfg.ID, cfg.Tracing, log)
	if err != nil {
		return cli.Failf("%v", err)
	}
	defer stopTracing()
	nc, err := queue.Connect(cli.WaitingConnect(cfg.NATS.ConnectOptions("agentfleet-worker "+cfg.ID), cfg.StartupWait, log),
		cli.NATSEvents(log)...)
	if err != nil {
		return cli.Failf("%v", err)
	}
	defer nc.Close()
	q, err := queue.Open(ctx, nc, cfg.NATS.QueueConfig(cfg.Prefix))
	if err != nil {
		return cli.Failf("%v", err)
	}
	st, err := cli.OpenStoreWaiting(ctx, cfg.DatabaseURL, cfg.StartupWait, log)
	if err != nil {
		return cli.Failf("%v", err)
	}
	defer func() { _ = st.Close() }()
	cfg.KnownSecrets = knownSecrets(cfg)
	w, err := worker.New(cfg.Config, worker.Deps{Store: st, Queue: q, Logger: log})
	if err != nil {
		return usageErrorf("%v", err)
	}
	stopHTTP, err := serveHTTP(cfg.Listen, w.Handler(), log)
	if err != nil {
		return cli.Failf("%v", err)
	}
	defer stopHTTP()
	if err := runUntilSignalled(ctx, w, log); err != nil {
		return cli.Failf("%v", err)
	}
	log.Info("worker stopped")
	return nil
}

// knownSecrets are the secrets of the worker's connections, for the
// worker to redact from tool outputs: the database URL's password and the
// NATS password and token, from whichever of flags, file or environment
// set them.
func knownSecrets(cfg runConfig) map[string]string {
	out := map[string]string{"nats.password": cfg.NATS.Password, "nats.token": cfg.NATS.Token}
	if u, err := url.Parse(cfg.DatabaseURL); err == nil && u.User != nil {
		out["database_url"], _ = u.User.Password()
	}
	if u, err := url.Parse(cfg.NATS.URL); err == nil && u.User != nil {
		if p, ok := u.User.Password(); ok {
			out["nats.url"] = p
		} else {
			out["nats.url"] = u.User.Username() // nats://TOKEN@host
		}
	}
	return out
}

// runUntilSignalled runs w until ctx ends (the first SIGTERM or SIGINT),
// then drains it; a second signal during the drain halts it at once,
// leaving its running tasks to be redelivered after the queue's ack wait.
func runUntilSignalled(ctx context.Context, w *worker.Worker, log *slog.Logger) error {
	halt, haltNow := context.WithCancel(context.WithoutCancel(ctx))
	defer haltNow()
	ran := make(chan error, 1)
	go func() { ran <- w.Run(halt) }()
	select {
	case err := <-ran:
		return err
	case <-ctx.Done():
	}
	log.Info("draining: pulling stopped, running sessions get drain_grace; a second signal stops at once",
		"drain_grace", w.Config().DrainGrace)
	second, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := w.Shutdown(second); err != nil {
		log.Warn("second signal: halting without handing running tasks back")
		haltNow()
	}
	return <-ran
}

// serveHTTP serves h on addr until the returned stop is called.
func serveHTTP(addr string, h http.Handler, log *slog.Logger) (stop func(), err error) {
	if addr == "off" {
		return func() {}, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen %s: %w (choose another listen address, or off)", addr, err)
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
