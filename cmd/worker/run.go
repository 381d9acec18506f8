package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"reflect"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
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
// a file (--config), AGENTFLEET_* environment variables (the key in upper
// case with dots as underscores: nats.url is AGENTFLEET_NATS_URL, sessions
// is AGENTFLEET_SESSIONS) and flags, flags winning. database_url, prefix,
// listen, log_format, log_level, queues and nats.* mean what they mean to
// `dispatcher serve`; the worker's own tunables are fleet.WorkerConfig's,
// at the top level. The zero value of every field means its default.
type runConfig struct {
	// DatabaseURL is a postgres:// URL, or the path of a SQLite database file.
	DatabaseURL string `mapstructure:"database_url"`
	// Prefix is the subject prefix, the same as the dispatcher's (default agentfleet).
	Prefix string `mapstructure:"prefix"`
	// Listen serves /healthz, /readyz and /metrics (default :9090); "off" disables it.
	Listen    string     `mapstructure:"listen"`
	LogFormat string     `mapstructure:"log_format"` // json (default) or text
	LogLevel  string     `mapstructure:"log_level"`  // debug, info (default), warn, error
	NATS      natsConfig `mapstructure:"nats"`

	fleet.WorkerConfig `mapstructure:",squash"`
}

// natsConfig is how to reach NATS and how the streams are laid out; the
// dispatcher reads the same keys.
type natsConfig struct {
	URL          string `mapstructure:"url"` // default nats://127.0.0.1:4222
	User         string `mapstructure:"user"`
	Password     string `mapstructure:"password"`
	Token        string `mapstructure:"token"`
	NKeySeedFile string `mapstructure:"nkey_seed_file"`
	CredsFile    string `mapstructure:"creds_file"`
	TLSCAFile    string `mapstructure:"tls_ca_file"`
	TLSCertFile  string `mapstructure:"tls_cert_file"`
	TLSKeyFile   string `mapstructure:"tls_key_file"`
	// Replicas of every stream (default 1; 3 on a 3-node cluster). Every
	// process applies it at start, so all of them must agree.
	Replicas   int           `mapstructure:"replicas"`
	AckWait    time.Duration `mapstructure:"ack_wait"`    // default 60s
	MaxDeliver int           `mapstructure:"max_deliver"` // default 5
}

func (n natsConfig) connectOptions(name string) queue.ConnectOptions {
	return queue.ConnectOptions{URL: n.URL, Name: name, User: n.User, Password: n.Password, Token: n.Token,
		NKeySeedFile: n.NKeySeedFile, CredsFile: n.CredsFile, TLSCAFile: n.TLSCAFile, TLSCertFile: n.TLSCertFile, TLSKeyFile: n.TLSKeyFile}
}

func (n natsConfig) queueConfig(prefix string) queue.Config {
	return queue.Config{Prefix: prefix, Replicas: n.Replicas, AckWait: n.AckWait, MaxDeliver: n.MaxDeliver}
}

// WithDefaults fills the zero fields the command owns; fleet.NewWorker
// fills the worker's.
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
	if c.NATS.URL == "" {
		c.NATS.URL = nats.DefaultURL
	}
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
	switch c.LogFormat {
	case "json", "text":
	default:
		errs = append(errs, fmt.Errorf("log_format must be json or text, got %q", c.LogFormat))
	}
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(c.LogLevel)); err != nil {
		errs = append(errs, fmt.Errorf("log_level must be debug, info, warn or error, got %q", c.LogLevel))
	}
	if err := c.NATS.validate(); err != nil {
		errs = append(errs, err)
	}
	if err := c.WorkerConfig.WithDefaults().Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func (n natsConfig) validate() error {
	var errs []error
	if err := n.connectOptions("").Validate(); err != nil {
		errs = append(errs, fmt.Errorf("nats: %w", err))
	}
	if n.Replicas < 0 || n.Replicas > 5 {
		errs = append(errs, fmt.Errorf("nats.replicas must be between 1 and 5 (0 = 1), got %d (AGENTFLEET_NATS_REPLICAS)", n.Replicas))
	}
	if n.AckWait < 0 || n.MaxDeliver < 0 {
		errs = append(errs, fmt.Errorf("nats.ack_wait and nats.max_deliver must be >= 0 (0 = default), got %s and %d", n.AckWait, n.MaxDeliver))
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
			cfg, err := loadRunConfig(v, cfgFile)
			if err != nil {
				return usageErrorf("%v", err)
			}
			return runWorker(cmd.Context(), cfg, cmd.ErrOrStderr())
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&cfgFile, "config", "", "configuration file (YAML, JSON or TOML)")
	fl.String("database-url", "", "postgres:// URL or SQLite file (database_url)")
	fl.String("nats-url", "", "NATS server URL(s), comma-separated (nats.url)")
	fl.String("prefix", "", "subject prefix (prefix, default agentfleet)")
	fl.StringSlice("queues", nil, "shared queues to serve (queues, default default)")
	fl.Int("sessions", 0, "concurrent sessions (sessions, default 4)")
	fl.String("worker-id", "", "worker id (worker_id, default host name and pid)")
	fl.String("workspace-root", "", "directory of local workspaces (workspace_root)")
	fl.String("listen", "", "address of /healthz, /readyz, /metrics, or off (listen, default :9090)")
	fl.String("log-format", "", "json or text (log_format, default json)")
	fl.String("log-level", "", "debug, info, warn or error (log_level, default info)")
	for _, flag := range []string{"database-url", "nats-url", "prefix", "queues", "sessions", "worker-id", "workspace-root",
		"listen", "log-format", "log-level"} {
		_ = v.BindPFlag(flagKey(flag), fl.Lookup(flag))
	}
	return cmd
}

// flagKey is the configuration key of a flag: nats-url is nats.url,
// worker-id is worker_id.
func flagKey(flag string) string {
	if k, ok := strings.CutPrefix(flag, "nats-"); ok {
		return "nats." + strings.ReplaceAll(k, "-", "_")
	}
	return strings.ReplaceAll(flag, "-", "_")
}

// loadRunConfig reads, completes and validates the configuration.
func loadRunConfig(v *viper.Viper, file string) (runConfig, error) {
	v.SetEnvPrefix("AGENTFLEET")
	v.SetEnvKeyReplacer(strings.NewReplacer(".", "_"))
	v.AutomaticEnv()
	bindEnvKeys(v, reflect.TypeFor[runConfig](), "")
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
	cfg = cfg.WithDefaults()
	return cfg, cfg.Validate()
}

// bindEnvKeys binds every key of t's mapstructure tags to its AGENTFLEET_*
// variable: AutomaticEnv alone only sees keys viper already knows. Maps
// (providers, ssh_keys, llm_concurrency) have no fixed keys and come from
// the file only.
func bindEnvKeys(v *viper.Viper, t reflect.Type, prefix string) {
	for f := range t.Fields() {
		tag, opts, _ := strings.Cut(f.Tag.Get("mapstructure"), ",")
		switch {
		case tag == "-" || !f.IsExported():
		case opts == "squash":
			bindEnvKeys(v, f.Type, prefix)
		case f.Type.Kind() == reflect.Struct:
			bindEnvKeys(v, f.Type, prefix+tag+".")
		case f.Type.Kind() != reflect.Map:
			_ = v.BindEnv(prefix + tag)
		}
	}
}

// runWorker wires the worker and runs it until ctx ends.
func runWorker(ctx context.Context, cfg runConfig, stderr interface{ Write([]byte) (int, error) }) error {
	log := newLogger(cfg.LogFormat, cfg.LogLevel, stderr)
	nc, err := queue.Connect(cfg.NATS.connectOptions("agentfleet-worker " + cfg.ID))
	if err != nil {
		return &exitError{code: 1, msg: err.Error()}
	}
	defer nc.Close()
	q, err := queue.Open(ctx, nc, cfg.NATS.queueConfig(cfg.Prefix))
	if err != nil {
		return &exitError{code: 1, msg: err.Error()}
	}
	st, err := openStore(ctx, cfg.DatabaseURL)
	if err != nil {
		return &exitError{code: 1, msg: err.Error()}
	}
	defer st.Close()
	w, err := fleet.NewWorker(cfg.WorkerConfig, fleet.WorkerDeps{Store: st, Queue: q, Logger: log})
	if err != nil {
		return usageErrorf("%v", err)
	}
	stopHTTP, err := serveHTTP(cfg.Listen, w.Handler(), log)
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

func newLogger(format, level string, w interface{ Write([]byte) (int, error) }) *slog.Logger {
	var lvl slog.Level
	_ = lvl.UnmarshalText([]byte(level))
	opts := &slog.HandlerOptions{Level: lvl}
	if format == "text" {
		return slog.New(slog.NewTextHandler(w, opts))
	}
	return slog.New(slog.NewJSONHandler(w, opts))
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
