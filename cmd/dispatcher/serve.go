package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/spf13/cobra"
	"github.com/spf13/viper"

	"github.com/agentfleet/agentfleet/agent/permission"
	"github.com/agentfleet/agentfleet/cmd/internal/cli"
	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/dashboard"
	"github.com/agentfleet/agentfleet/fleet/dispatcher"
	"github.com/agentfleet/agentfleet/fleet/dispatcher/webhook"
	"github.com/agentfleet/agentfleet/internal/oidcauth"
	"github.com/agentfleet/agentfleet/internal/outbound"
	"github.com/agentfleet/agentfleet/llm/pricing"
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
	Listen         string            `mapstructure:"listen"`          // default "127.0.0.1:8080"
	Token          string            `mapstructure:"token"`           // required unless NoAuth
	NoAuth         bool              `mapstructure:"no_auth"`         // serve /v1 without a token (a trusted network only)
	DatabaseURL    string            `mapstructure:"database_url"`    // postgres://... or a SQLite file; required
	Prefix         string            `mapstructure:"prefix"`          // subject prefix, default "agentfleet"
	Profiles       []string          `mapstructure:"profiles"`        // default anthropic, openai, gemini
	DefaultProfile string            `mapstructure:"default_profile"` // default: the first profile
	Queues         []string          `mapstructure:"queues"`          // queues whose lag is reported, default ["default"]
	LogFormat      string            `mapstructure:"log_format"`      // "json" (default) or "text"
	LogLevel       string            `mapstructure:"log_level"`       // debug, info (default), warn, error
	Tracing        cli.TracingConfig `mapstructure:"tracing"`         // OpenTelemetry sampling (cli.TracingConfig)
	ShutdownGrace  time.Duration     `mapstructure:"shutdown_grace"`  // default 10 s
	StartupWait    time.Duration     `mapstructure:"startup_wait"`    // wait for NATS and the store at start; default 2 min, negative: none
	// Limits given to a submitted task's zero limits (default fleet.DefaultLimits:
	// 200 turns, 2h, 20M tokens, no cost bound); no_default_limits leaves them unbounded.
	DefaultMaxTurns   int           `mapstructure:"default_max_turns"`
	DefaultWallTime   time.Duration `mapstructure:"default_wall_time"`
	DefaultMaxTokens  int64         `mapstructure:"default_max_tokens"`
	DefaultMaxCostUSD float64       `mapstructure:"default_max_cost_usd"`
	NoDefaultLimits   bool          `mapstructure:"no_default_limits"`
	// Policy bounds what specs may ask for: policy.max_turns,
	// policy.max_wall_time, policy.max_command_timeout, policy.env_policy,
	// policy.web_fetch... (docs/operations.md).
	Policy fleet.Policy   `mapstructure:"policy"`
	NATS   cli.NATSConfig `mapstructure:"nats"`
	// Permissions is the operator's permission policy, the same key the
	// workers read: when set, a spec that widens it is refused with a 400.
	Permissions *permission.Policy `mapstructure:"permissions"`
	// ApprovalSweep is how often expired approvals are denied (default 1 min).
	ApprovalSweep time.Duration `mapstructure:"approval_sweep"`
	// The delivery credentials references the workers hold (ssh_keys,
	// delivery.tokens): a task naming another is refused at submission.
	// Empty: not checked here (the worker refuses it).
	DeliverySSHKeys []string `mapstructure:"delivery_ssh_keys"`
	DeliveryTokens  []string `mapstructure:"delivery_tokens"`
	// What deliveries may push to, as the workers' configuration says
	// (fleet.DeliveryScope): delivery_branches and delivery_repos for
	// deliveries naming no credentials, delivery_token_scopes and
	// delivery_ssh_key_scopes ({repos, branches} by reference) for the
	// others. A spec outside them is refused at submission; unset, every
	// delivery may push to any repository and only agentfleet/* branches.
	DeliveryBranches     []string                       `mapstructure:"delivery_branches"`
	DeliveryRepos        []string                       `mapstructure:"delivery_repos"`
	DeliveryTokenScopes  map[string]fleet.DeliveryScope `mapstructure:"delivery_token_scopes"`
	DeliverySSHKeyScopes map[string]fleet.DeliveryScope `mapstructure:"delivery_ssh_key_scopes"`
	// BudgetCheckInterval is how often label budgets are checked against
	// spend (default 5 s; fleet/budget).
	BudgetCheckInterval time.Duration `mapstructure:"budget_check_interval"`
	// GitStore serves the fleet git store (git_store.dir, .key,
	// .worker_token, .keep_after_end; fleet/dispatcher gitstore.go):
	// subagents of local tasks then run on any worker.
	GitStore dispatcher.GitStoreConfig `mapstructure:"git_store"`
	// ScheduleInterval is how often due cron schedules and delayed starts
	// (run_at) are looked for (default 1 s; negative: this dispatcher
	// fires none, another replica does).
	ScheduleInterval time.Duration `mapstructure:"schedule_interval"`
	// WebhookURLs receive each task's end, signed with WebhookSecret
	// (AGENTFLEET_WEBHOOK_SECRET); see fleet/dispatcher/webhook.
	WebhookURLs []string `mapstructure:"webhook_urls"`
	// WebhookTenantURLs receive the task ends of one tenant each.
	WebhookTenantURLs map[string][]string `mapstructure:"webhook_tenant_urls"`
	WebhookSecret     string              `mapstructure:"webhook_secret"`
	// OutboundAllowPrivate lists the internal addresses ("10.0.0.5") and
	// prefixes ("10.20.0.0/16") webhook receivers may be at; every other
	// loopback, private, link-local, CGNAT or NAT64 address is refused
	// after resolution (internal/outbound). Empty by default.
	OutboundAllowPrivate []string `mapstructure:"outbound_allow_private"`
	// TLSCertFile and TLSKeyFile (both or neither) serve the API over
	// HTTPS. Off loopback the API needs them, or BehindTLSProxy: a proxy in
	// front of it terminates TLS (see checkListenTLS).
	TLSCertFile    string `mapstructure:"tls_cert_file"`
	TLSKeyFile     string `mapstructure:"tls_key_file"`
	BehindTLSProxy bool   `mapstructure:"behind_tls_proxy"`
	// AllowedHosts are the names clients reach the API by besides
	// localhost and addresses (fleet/dispatcher APIOptions.AllowedHosts):
	// the Host header is checked against them when set, and always
	// without a token (no_auth).
	AllowedHosts []string `mapstructure:"allowed_hosts"`
	// Sandbox, when sandbox_network or sandbox_allow_hosts is set, bounds
	// the sandbox field of submitted specs (a wider one is a 400); workers
	// check their own bound too.
	Sandbox fleet.SandboxBound `mapstructure:",squash"`
	// SandboxLimits bound a submitted spec's sandbox.limits (pids,
	// memory, cpus, cpu_time; a larger one is a 400), as the workers'
	// sandbox_limits bound them: keep the two the same. A key it leaves
	// unset takes the workers' default (fleet.DefaultSandboxLimits).
	SandboxLimits fleet.SandboxLimits `mapstructure:"sandbox_limits"`
	// Prices are the workers' prices setting (prices.<model>.input_per_mtok,
	// output_per_mtok, ...): a task with a cost limit or a budgeted label
	// whose model has none is refused at submission, and /v1/usage tells
	// unpriced sessions apart. Keep it the same as the workers'.
	Prices map[string]pricing.Price `mapstructure:"prices"`
	// AuditRetention is how long the audit log keeps its entries (default
	// 90 days, 2160h; negative: for ever) in the tenants without a window
	// of their own (retention.tenants.<tenant>.audit); retention.default.audit,
	// when set, takes its place.
	AuditRetention time.Duration `mapstructure:"audit_retention"`
	// Retention is how long ended tasks' turns, tool outputs, artifacts,
	// events and audit entries are kept, by default and per tenant (retention.default.turns,
	// retention.tenants.<tenant>.artifacts, retention.floor, ...;
	// fleet/dispatcher Retention). Unset: kept for ever.
	Retention dispatcher.Retention `mapstructure:"retention"`
	// OIDC is single sign-on with an OpenID Connect provider (oidc.issuer,
	// oidc.client_id, oidc.client_secret_file, oidc.redirect_url,
	// oidc.mappings...; internal/oidcauth, docs/operations.md): the
	// dashboard's login at /auth/ and the provider's tokens on the API.
	OIDC oidcauth.Config `mapstructure:"oidc"`
	// Forges are the forges whose webhooks POST /v1/forges/{name}/events
	// takes (forges.<name>.kind, secret_file, api_url, token_file,
	// triggers, max_ci_repairs, spec or spec_file...; forgeConfigs,
	// fleet/dispatcher ForgeConfig, docs/api.md).
	Forges map[string]map[string]any `mapstructure:"forges"`
}

// allowPrivate is OutboundAllowPrivate parsed (Validate reports errors).
func (c ServeConfig) allowPrivate() []netip.Prefix {
	p, _ := outbound.ParsePrefixes("outbound_allow_private", c.OutboundAllowPrivate)
	return p
}

// sandboxBound is the configured bound, nil when none is.
func (c ServeConfig) sandboxBound() *fleet.SandboxBound {
	if c.Sandbox.Network == "" && len(c.Sandbox.AllowHosts) == 0 {
		return nil
	}
	return &c.Sandbox
}

// defaultLimits are the configured default limits, each zero key taking
// fleet.DefaultLimits' value (none at all with no_default_limits).
func (c ServeConfig) defaultLimits() fleet.Limits {
	l := fleet.Limits{MaxTurns: c.DefaultMaxTurns, WallTime: fleet.Duration(c.DefaultWallTime),
		MaxTokens: c.DefaultMaxTokens, MaxCostUSD: c.DefaultMaxCostUSD}
	if c.NoDefaultLimits {
		return l
	}
	return l.Within(fleet.DefaultLimits)
}

// WithDefaults fills the zero fields.
func (c ServeConfig) WithDefaults() ServeConfig {
	if c.Listen == "" {
		c.Listen = "127.0.0.1:8080"
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
	c.NATS = c.NATS.WithDefaults()
	return c
}

// checkListenTLS refuses to serve the API in clear text off loopback,
// where the bearer token and every task's data would cross the network
// unencrypted: a listen address whose host is not a loopback address or
// localhost (":8080" and 0.0.0.0 listen on every interface) needs
// tls_cert_file and tls_key_file, or behind_tls_proxy.
func (c ServeConfig) checkListenTLS() error {
	if (c.TLSCertFile == "") != (c.TLSKeyFile == "") {
		return errors.New("tls_cert_file and tls_key_file must be set together (AGENTFLEET_TLS_CERT_FILE, AGENTFLEET_TLS_KEY_FILE)")
	}
	if c.TLSCertFile != "" && c.BehindTLSProxy {
		return errors.New("tls_cert_file and behind_tls_proxy are both set: choose one (the dispatcher serves TLS itself, or a proxy does)")
	}
	host, _, _ := net.SplitHostPort(c.Listen)
	if c.TLSCertFile != "" || c.BehindTLSProxy || host == "localhost" {
		return nil
	}
	if ip, err := netip.ParseAddr(host); err == nil && ip.Unmap().IsLoopback() {
		return nil
	}
	return fmt.Errorf("listen %q is not a loopback address, and the API would carry its token and every task in clear text: "+
		"set tls_cert_file and tls_key_file (AGENTFLEET_TLS_CERT_FILE, AGENTFLEET_TLS_KEY_FILE, --tls-cert-file, --tls-key-file) to serve HTTPS, "+
		"or behind_tls_proxy: true (AGENTFLEET_BEHIND_TLS_PROXY, --behind-tls-proxy) when a proxy or ingress in front terminates TLS, "+
		"or listen on 127.0.0.1", c.Listen)
}

// knownCredentials are the delivery credentials and scopes the workers
// hold, as this configuration lists them.
func (c ServeConfig) knownCredentials() fleet.KnownCredentials {
	return fleet.KnownCredentials{SSHKeys: c.DeliverySSHKeys, Tokens: c.DeliveryTokens, Scopes: fleet.DeliveryScopes{
		Default: fleet.DeliveryScope{Repos: c.DeliveryRepos, Branches: c.DeliveryBranches},
		Tokens:  c.DeliveryTokenScopes, SSHKeys: c.DeliverySSHKeyScopes}}
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
	}
	if err := c.checkListenTLS(); err != nil {
		return err
	}
	if err := cli.CheckLogging(c.LogFormat, c.LogLevel); err != nil {
		return err
	}
	if c.ShutdownGrace < 0 {
		return fmt.Errorf("shutdown_grace must be >= 0, got %s", c.ShutdownGrace)
	}
	if err := c.Policy.Validate(); err != nil {
		return fmt.Errorf("policy.%w", err)
	}
	if err := c.knownCredentials().Scopes.Validate(); err != nil {
		return err
	}
	if err := c.NATS.Validate(); err != nil {
		return err
	}
	if err := c.SandboxLimits.ValidateBound(); err != nil {
		return err
	}
	if err := c.Sandbox.Validate(); err != nil {
		return err
	}
	if c.Permissions != nil {
		if err := c.Permissions.Validate(); err != nil {
			return fmt.Errorf("permissions.%w", err)
		}
	}
	if c.ApprovalSweep < 0 {
		return fmt.Errorf("approval_sweep must be >= 0, got %s", c.ApprovalSweep)
	}
	if err := (webhook.Config{URLs: c.WebhookURLs, TenantURLs: c.WebhookTenantURLs, Secret: c.WebhookSecret}).WithDefaults().Validate(); err != nil {
		return err
	}
	if _, err := outbound.ParsePrefixes("outbound_allow_private", c.OutboundAllowPrivate); err != nil {
		return err
	}
	if err := c.OIDC.WithDefaults().Validate(); err != nil {
		return err
	}
	forges, err := c.forgeConfigs()
	if err != nil {
		return err
	}
	dc := dispatcher.Config{Profiles: c.Profiles, DefaultProfile: c.DefaultProfile, Queues: c.Queues, Prices: c.Prices, Retention: c.Retention,
		AuditRetention: c.AuditRetention, Forges: forges}
	return dc.WithDefaults().Validate() // names the keys itself
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
AGENTFLEET_LISTEN, ...: the key in upper case, dots as underscores) and flags, flags winning. The database must be migrated first (dispatcher migrate up).

It listens on 127.0.0.1:8080 by default. Off loopback it serves HTTPS with --tls-cert-file and
--tls-key-file, or plain HTTP with --behind-tls-proxy when a proxy in front terminates TLS; it
refuses to start otherwise. A nats:// server off loopback needs TLS or nats.allow_plaintext.`,
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			cfg, err := cli.Load[ServeConfig](v, file)
			if err != nil {
				return usageErrorf("%v", err)
			}
			return serve(c.Context(), cfg, c.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.StringVar(&file, "config", "", "configuration file")
	f.String("listen", "", "address to listen on (default 127.0.0.1:8080; off loopback TLS is required)")
	f.String("tls-cert-file", "", "serve HTTPS with this certificate (PEM; with --tls-key-file)")
	f.String("tls-key-file", "", "the private key of --tls-cert-file (PEM)")
	f.Bool("behind-tls-proxy", false, "a proxy in front terminates TLS: serve plain HTTP off loopback")
	f.StringSlice("allowed-hosts", nil, "names clients reach the API by (checked against the Host header)")
	f.String("token", "", "bearer token clients must send (default $AGENTFLEET_TOKEN)")
	f.Bool("no-auth", false, "serve the API without a token (trusted networks only)")
	cli.CommonFlags(f)
	f.StringSlice("profiles", nil, "profiles tasks may use (default anthropic,openai,gemini)")
	f.String("default-profile", "", "profile of a task that names none (default: the first profile)")
	f.StringSlice("queues", nil, "queues whose lag /v1/stats and /metrics report (default: default)")
	cli.BindFlags(v, f)
	return cmd
}

// serve runs the API until ctx ends, then shuts down within the grace.
func serve(ctx context.Context, cfg ServeConfig, logOut io.Writer) error {
	log := cli.NewLogger(cfg.LogFormat, cfg.LogLevel, logOut)
	stopTracing, err := cli.SetupTracing(ctx, "agentfleet-dispatcher", "", cfg.Tracing, log)
	if err != nil {
		return failf("%v", err)
	}
	defer stopTracing()
	nc, err := queue.Connect(cli.WaitingConnect(cfg.NATS.ConnectOptions("agentfleet-dispatcher"), cfg.StartupWait, log),
		cli.NATSEvents(log)...)
	if err != nil {
		return failf("connect to NATS at %s: %v (set AGENTFLEET_NATS_URL or run `agentfleet-dev dev`)", cfg.NATS.URL, err)
	}
	defer nc.Close()
	q, err := queue.Open(ctx, nc, cfg.NATS.QueueConfig(cfg.Prefix))
	if err != nil {
		return failf("%v", err)
	}
	st, err := cli.OpenStoreWaiting(ctx, cfg.DatabaseURL, cfg.StartupWait, log)
	if err != nil {
		return failf("%v", err)
	}
	defer func() { _ = st.Close() }()
	forges, err := cfg.forgeConfigs()
	if err != nil {
		return failf("%v", err)
	}
	d, err := dispatcher.New(st, q, dispatcher.Config{Profiles: cfg.Profiles, DefaultProfile: cfg.DefaultProfile, Queues: cfg.Queues,
		DefaultLimits: cfg.defaultLimits(), NoDefaultLimits: cfg.NoDefaultLimits, Policy: cfg.Policy, Logger: log,
		Permissions: cfg.Permissions, ApprovalSweep: cfg.ApprovalSweep,
		Credentials:         cfg.knownCredentials(),
		BudgetCheckInterval: cfg.BudgetCheckInterval, GitStore: cfg.GitStore, ScheduleInterval: cfg.ScheduleInterval,
		Webhooks: webhook.Config{URLs: cfg.WebhookURLs, TenantURLs: cfg.WebhookTenantURLs, Secret: cfg.WebhookSecret,
			AllowPrivate: cfg.allowPrivate()},
		SandboxBound: cfg.sandboxBound(), SandboxLimits: cfg.SandboxLimits, Prices: cfg.Prices, AuditRetention: cfg.AuditRetention,
		Retention: cfg.Retention, Forges: forges})
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
	opts := dispatcher.APIOptions{Token: cfg.Token, Ready: ready, ListenAddr: cfg.Listen, AllowedHosts: cfg.AllowedHosts,
		TraceUIURL: cfg.Tracing.UIURL}
	sso, err := singleSignOn(ctx, cfg, log)
	if err != nil {
		return err
	}
	if sso != nil {
		opts.Authenticators = append(opts.Authenticators, sso.Authenticators()...)
	}
	h := dashboard.With(d.Handler(opts)) // the dashboard at /, the API behind it
	if sso != nil {
		h = withLogin(h, sso)
	}
	return runServer(ctx, cfg, d, h, log)
}

func runServer(ctx context.Context, cfg ServeConfig, d *dispatcher.Dispatcher, h http.Handler, log *slog.Logger) error {
	ln, err := listenAPI(cfg)
	if err != nil {
		return err
	}
	return serveOn(ctx, ln, cfg, d, h, log)
}

// listenAPI checks the TLS files, then listens on cfg.Listen.
func listenAPI(cfg ServeConfig) (net.Listener, error) {
	if cfg.TLSCertFile != "" {
		if _, err := tls.LoadX509KeyPair(cfg.TLSCertFile, cfg.TLSKeyFile); err != nil {
			return nil, failf("tls_cert_file %s, tls_key_file %s: %v (both PEM, the key matching the certificate)", cfg.TLSCertFile, cfg.TLSKeyFile, err)
		}
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return nil, failf("listen on %s: %v (is another dispatcher running? choose --listen)", cfg.Listen, err)
	}
	return ln, nil
}

// serveOn serves h on ln (HTTPS with cfg's certificate) and runs d until
// ctx ends, then shuts both down within the grace.
func serveOn(ctx context.Context, ln net.Listener, cfg ServeConfig, d *dispatcher.Dispatcher, h http.Handler, log *slog.Logger) error {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	runCtx, stopRun := context.WithCancel(ctx)
	defer stopRun()
	ran := make(chan error, 1)
	go func() { ran <- d.Run(runCtx) }()
	served := make(chan error, 1)
	go func() {
		if cfg.TLSCertFile != "" {
			served <- srv.ServeTLS(ln, cfg.TLSCertFile, cfg.TLSKeyFile)
			return
		}
		served <- srv.Serve(ln)
	}()
	log.Info("dispatcher listening", "addr", ln.Addr().String(), "tls", cfg.TLSCertFile != "", "behind_tls_proxy", cfg.BehindTLSProxy)
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
