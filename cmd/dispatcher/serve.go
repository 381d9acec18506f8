package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"reflect"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/spf13/cobra"
	"github.com/spf13/viper"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/dashboard"
	"github.com/agentfleet/agentfleet/queue"
)

func init() { addCommand(newServeCmd) }

// ServeConfig is the configuration of `dispatcher serve`, read by viper
// from a file (--config), AGENTFLEET_* environment variables (the key in
// upper case, dots as underscores: nats.replicas is AGENTFLEET_NATS_REPLICAS)
// and flags, flags winning. database_url, prefix, listen, log_format,
// log_level, queues and nats.* are the same keys `worker run` reads.
// The zero value of every field means the default named next to it.
type ServeConfig struct {
	Listen         string        `mapstructure:"listen"`          // default ":8080"
	Token          string        `mapstructure:"token"`           // required unless NoAuth
	NoAuth         bool          `mapstructure:"no_auth"`         // serve /v1 without a token (a trusted network only)
	DatabaseURL    string        `mapstructure:"database_url"`    // postgres://... or a SQLite file; required
	Prefix         string        `mapstructure:"prefix"`          // subject prefix, default "agentfleet"
	Profiles       []string      `mapstructure:"profiles"`        // default openai, anthropic, gemini
	DefaultProfile string        `mapstructure:"default_profile"` // default: the first profile
	Queues         []string      `mapstructure:"queues"`          // queues whose lag is reported, default ["default"]
	LogFormat      string        `mapstructure:"log_format"`      // "json" (default) or "text"
	LogLevel       string        `mapstructure:"log_level"`       // debug, info (default), warn, error
	ShutdownGrace  time.Duration `mapstructure:"shutdown_grace"`  // default 10 s
	NATS           NATSConfig    `mapstructure:"nats"`
}

// NATSConfig is how to reach NATS (queue.ConnectOptions) and how the streams
// are laid out (queue.Config); workers read the same keys.
type NATSConfig struct {
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

func (n NATSConfig) options(name string) queue.ConnectOptions {
	return queue.ConnectOptions{URL: n.URL, Name: name, User: n.User, Password: n.Password, Token: n.Token,
		NKeySeedFile: n.NKeySeedFile, CredsFile: n.CredsFile, TLSCAFile: n.TLSCAFile, TLSCertFile: n.TLSCertFile, TLSKeyFile: n.TLSKeyFile}
}

func (n NATSConfig) queueConfig(prefix string) queue.Config {
	return queue.Config{Prefix: prefix, Replicas: n.Replicas, AckWait: n.AckWait, MaxDeliver: n.MaxDeliver}
}

// validate checks what queue.Open would otherwise reject with Go field names.
func (n NATSConfig) validate() error {
	if err := n.options("").Validate(); err != nil {
		return fmt.Errorf("nats: %w", err)
	}
	switch {
	case n.Replicas < 0 || n.Replicas > 5:
		return fmt.Errorf("nats.replicas must be between 1 and 5 (0 = 1), got %d (AGENTFLEET_NATS_REPLICAS)", n.Replicas)
	case n.AckWait < 0 || n.MaxDeliver < 0:
		return fmt.Errorf("nats.ack_wait and nats.max_deliver must be >= 0 (0 = default), got %s and %d", n.AckWait, n.MaxDeliver)
	}
	return nil
}

// WithDefaults fills the zero fields.
func (c ServeConfig) WithDefaults() ServeConfig {
	if c.Listen == "" {
		c.Listen = ":8080"
	}
	if c.LogFormat == "" {
		c.LogFormat = "json"
	}
	if c.LogLevel == "" {
		c.LogLevel = "info"
	}
	if c.ShutdownGrace == 0 {
		c.ShutdownGrace = 10 * time.Second
	}
	if c.NATS.URL == "" {
		c.NATS.URL = nats.DefaultURL
	}
	return c
}

// Validate names the first field that is wrong and what to do.
func (c ServeConfig) Validate() error {
	if _, _, err := net.SplitHostPort(c.Listen); err != nil {
		return fmt.Errorf("listen %q must be host:port or :port (AGENTFLEET_LISTEN, --listen): %v", c.Listen, err)
	}
	switch {
	case c.Token == "" && !c.NoAuth:
		return errors.New("token is required: set AGENTFLEET_TOKEN or --token (or no_auth: true on a trusted network)")
	case c.Token != "" && c.NoAuth:
		return errors.New("token and no_auth are both set: choose one")
	case c.DatabaseURL == "":
		return fmt.Errorf("database_url is required: set %s or --database-url (postgres://... or a SQLite file)", EnvDatabaseURL)
	case c.LogFormat != "json" && c.LogFormat != "text":
		return fmt.Errorf("log_format must be json or text, got %q", c.LogFormat)
	case (&slog.LevelVar{}).UnmarshalText([]byte(c.LogLevel)) != nil:
		return fmt.Errorf("log_level must be debug, info, warn or error, got %q", c.LogLevel)
	case c.ShutdownGrace < 0:
		return fmt.Errorf("shutdown_grace must be >= 0, got %s", c.ShutdownGrace)
	}
	if err := c.NATS.validate(); err != nil {
		return err
	}
	dc := fleet.DispatcherConfig{Profiles: c.Profiles, DefaultProfile: c.DefaultProfile, Queues: c.Queues}
	if err := dc.WithDefaults().Validate(); err != nil {
		return fmt.Errorf("profiles/default_profile/queues: %w", err)
	}
	return nil
}

func newServeCmd() *cobra.Command {
	v := viper.New()
	var file string
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the dispatcher HTTP API",
		Long: `Run the dispatcher: the task API of docs/api.md on --listen, backed by NATS and the store.

Configuration comes from --config (YAML, JSON or TOML), AGENTFLEET_* environment variables
(AGENTFLEET_TOKEN, AGENTFLEET_DATABASE_URL, AGENTFLEET_NATS_URL, AGENTFLEET_NATS_REPLICAS,
AGENTFLEET_LISTEN, ...: the key in upper case, dots as underscores) and flags, flags winning. The database must be migrated first (dispatcher migrate up).`,
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			cfg, err := loadServeConfig(v, file)
			if err != nil {
				return usageErrorf("%v", err)
			}
			return serve(c.Context(), cfg, c.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.StringVar(&file, "config", "", "configuration file")
	f.String("listen", "", "address to listen on (default :8080)")
	f.String("token", "", "bearer token clients must send (default $AGENTFLEET_TOKEN)")
	f.Bool("no-auth", false, "serve the API without a token (trusted networks only)")
	f.String("database-url", "", "postgres:// URL or SQLite file (default $"+EnvDatabaseURL+")")
	f.String("nats-url", "", "NATS server URL(s) (default nats://127.0.0.1:4222)")
	f.String("prefix", "", "subject prefix (default agentfleet)")
	f.StringSlice("profiles", nil, "profiles tasks may use (default openai,anthropic,gemini)")
	f.String("default-profile", "", "profile of a task that names none (default: the first profile)")
	f.StringSlice("queues", nil, "queues whose lag /v1/stats and /metrics report (default: default)")
	f.String("log-format", "", "json or text (default json)")
	f.String("log-level", "", "debug, info, warn or error (default info)")
	for key, flag := range map[string]string{"listen": "listen", "token": "token", "no_auth": "no-auth", "database_url": "database-url",
		"nats.url": "nats-url", "prefix": "prefix", "profiles": "profiles", "default_profile": "default-profile", "queues": "queues",
		"log_format": "log-format", "log_level": "log-level"} {
		_ = v.BindPFlag(key, f.Lookup(flag))
	}
	return cmd
}

// loadServeConfig reads the configuration from the file, the environment
// and the flags bound to v.
func loadServeConfig(v *viper.Viper, file string) (ServeConfig, error) {
	v.SetEnvPrefix("AGENTFLEET")
	v.SetEnvKeyReplacer(strings.NewReplacer(".", "_"))
	v.AutomaticEnv()
	bindEnvKeys(v, reflect.TypeFor[ServeConfig](), "")
	if file != "" {
		v.SetConfigFile(file)
		if err := v.ReadInConfig(); err != nil {
			return ServeConfig{}, fmt.Errorf("config file %s: %v", file, err)
		}
	}
	var cfg ServeConfig
	if err := v.Unmarshal(&cfg); err != nil {
		return ServeConfig{}, fmt.Errorf("configuration: %v", err)
	}
	cfg = cfg.WithDefaults()
	return cfg, cfg.Validate()
}

// serve runs the API until ctx ends, then shuts down within the grace.
func serve(ctx context.Context, cfg ServeConfig, logOut interface{ Write([]byte) (int, error) }) error {
	log := newLogger(cfg.LogFormat, cfg.LogLevel, logOut)
	nc, err := queue.Connect(cfg.NATS.options("agentfleet-dispatcher"))
	if err != nil {
		return failf("connect to NATS at %s: %v (set AGENTFLEET_NATS_URL or run `dispatcher dev`)", cfg.NATS.URL, err)
	}
	defer nc.Close()
	q, err := queue.Open(ctx, nc, cfg.NATS.queueConfig(cfg.Prefix))
	if err != nil {
		return failf("%v", err)
	}
	st, err := openStore(ctx, cfg.DatabaseURL)
	if err != nil {
		return failf("%v", err)
	}
	defer st.Close()
	d, err := fleet.NewDispatcher(st, q, fleet.DispatcherConfig{Profiles: cfg.Profiles, DefaultProfile: cfg.DefaultProfile, Queues: cfg.Queues, Logger: log})
	if err != nil {
		return failf("%v", err)
	}
	if cfg.NoAuth {
		log.Warn("the API is served without authentication (no_auth)")
	}
	ready := func(ctx context.Context) error {
		if s := nc.Status(); s != nats.CONNECTED {
			return fmt.Errorf("NATS connection is %s", s)
		}
		return st.Ping(ctx)
	}
	h := dashboard.With(d.Handler(fleet.APIOptions{Token: cfg.Token, Ready: ready})) // the dashboard at /, the API behind it
	return runServer(ctx, cfg, d, h, log)
}

func runServer(ctx context.Context, cfg ServeConfig, d *fleet.Dispatcher, h http.Handler, log *slog.Logger) error {
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return failf("listen on %s: %v (is another dispatcher running? choose --listen)", cfg.Listen, err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	runCtx, stopRun := context.WithCancel(ctx)
	defer stopRun()
	ran := make(chan error, 1)
	go func() { ran <- d.Run(runCtx) }()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	log.Info("dispatcher listening", "addr", ln.Addr().String())
	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-served:
	}
	shutCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.ShutdownGrace)
	defer cancel()
	_ = srv.Shutdown(shutCtx) // event streams end when their requests' contexts do
	stopRun()
	if err := <-ran; err != nil {
		log.Error("dispatcher background work", "err", err)
	}
	if serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed) {
		return failf("serve: %v", serveErr)
	}
	return nil
}

func newLogger(format, level string, w interface{ Write([]byte) (int, error) }) *slog.Logger {
	if w == nil {
		w = os.Stderr
	}
	var lvl slog.Level
	_ = lvl.UnmarshalText([]byte(level)) // checked by Validate
	opts := &slog.HandlerOptions{Level: lvl}
	if format == "text" {
		return slog.New(slog.NewTextHandler(w, opts))
	}
	return slog.New(slog.NewJSONHandler(w, opts))
}

// bindEnvKeys binds every key of t's mapstructure tags to its AGENTFLEET_*
// variable: AutomaticEnv alone only sees keys viper already knows. `worker
// run` binds its keys the same way.
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
