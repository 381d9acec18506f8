package worker

import (
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/agentfleet/agentfleet/agent/permission"
	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/delivery"
	"github.com/agentfleet/agentfleet/fleet/extensions"
	"github.com/agentfleet/agentfleet/fleet/models"
	"github.com/agentfleet/agentfleet/internal/outbound"
	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/llm/pricing"
	"github.com/agentfleet/agentfleet/llm/ratelimit"
	"github.com/agentfleet/agentfleet/queue"
)

// Defaults of Config.
const (
	DefaultSessions          = 4
	DefaultLLMConcurrency    = 64
	DefaultHeartbeatInterval = 10 * time.Second
	DefaultStaleAfter        = 45 * time.Second
	DefaultDrainGrace        = 30 * time.Second
	DefaultKeepFailed        = 24 * time.Hour
	DefaultRetryBackoff      = 5 * time.Second
	DefaultMaxRetryBackoff   = 5 * time.Minute
)

// ProviderConfig says how a worker reaches the provider behind one
// profile (package models).
type ProviderConfig = models.ProviderConfig

// SSHKeyConfig is what a key reference in a task spec resolves to.
type SSHKeyConfig struct {
	// KeyFile is the private key file (unencrypted OpenSSH or PEM).
	KeyFile string `mapstructure:"key_file"`
	// UseAgent offers the keys of the agent at SSH_AUTH_SOCK instead.
	UseAgent bool `mapstructure:"use_agent"`
	// KnownHostsFile vouches for the hosts; "" means Config.KnownHostsFile.
	KnownHostsFile string `mapstructure:"known_hosts_file"`
	// DeliveryScope (repos, branches) is what a delivery may push with the
	// key: by default any repository and the branches agentfleet/*.
	fleet.DeliveryScope `mapstructure:",squash"`
}

// Config configures one worker. The zero value of every field means
// the default named next to it; call WithDefaults, then Validate. The
// mapstructure tags are the keys of `worker run`'s configuration, where they
// sit at the top level next to the keys shared with the dispatcher
// (database_url, prefix, nats.*): worker_id is AGENTFLEET_WORKER_ID,
// sessions is AGENTFLEET_SESSIONS. Validate's errors name those keys.
type Config struct {
	// ID names the worker: its own subject is <prefix>.tasks.worker.<ID>,
	// where children of its local-workspace tasks go. Default: the host name
	// and process id. It must be stable across restarts for parked parents
	// with a local workspace to resume on a restarted worker.
	ID string `mapstructure:"worker_id"`
	// Queues are the shared queues served (default ["default"]).
	Queues []string `mapstructure:"queues"`
	// Tenants are the tenants whose tasks this worker runs (default: every
	// tenant). A worker pool serving some tenants runs under a NATS user
	// that may read only their sessions' control subjects (tenants.go).
	Tenants []string `mapstructure:"tenants"`
	// ConcurrencyKeys are the settings of named concurrency keys, and
	// ConcurrencyKeyDefault those of every other key (fairness.go).
	ConcurrencyKeys       map[string]KeyLimit `mapstructure:"concurrency_keys"`
	ConcurrencyKeyDefault KeyLimit            `mapstructure:"concurrency_key_default"`
	// Sessions is how many sessions run at once (default 4). A parked
	// session holds none.
	Sessions int `mapstructure:"sessions"`
	// LLMConcurrency caps concurrent model calls per provider name (default
	// DefaultLLMConcurrency for any provider not listed).
	LLMConcurrency map[string]int `mapstructure:"llm_concurrency"`
	// WorkspaceRoot holds local workspaces, one directory per task
	// (default $TMPDIR/agentfleet-workspaces).
	WorkspaceRoot string `mapstructure:"workspace_root"`
	// KeepFailed is how long the workspace of a task that did not succeed is
	// kept for inspection (default 24 h; negative deletes it at once).
	// Workspaces of succeeded tasks are deleted when the task ends.
	KeepFailed time.Duration `mapstructure:"keep_failed"`
	// Providers configures each profile's provider, keyed by profile name
	// (openai, anthropic, gemini).
	Providers map[string]ProviderConfig `mapstructure:"providers"`
	// AllowedProfiles and AllowedModels restrict what specs may ask for;
	// empty allows all. A task asking for something else fails at once.
	AllowedProfiles []string `mapstructure:"allowed_profiles"`
	AllowedModels   []string `mapstructure:"allowed_models"`
	// Prices overrides or adds model prices on top of the built-in table
	// of llm/pricing, keyed by model name (or a name prefix ending before
	// a '-'): prices.<model>.input_per_mtok, output_per_mtok,
	// cache_read_per_mtok, cache_write_per_mtok.
	Prices map[string]pricing.Price `mapstructure:"prices"`
	// RateLimits are fleet-wide limits per provider, credential and model,
	// shared by every worker through NATS (llm/ratelimit).
	RateLimits ratelimit.Rules `mapstructure:"rate_limits"`
	// SSHKeys maps the key references specs name to keys on this worker.
	SSHKeys map[string]SSHKeyConfig `mapstructure:"ssh_keys"`
	// Delivery holds the tokens deliveries name by reference and the task
	// link of pull requests (package delivery); ssh_key references of a
	// delivery resolve from SSHKeys.
	Delivery delivery.Config `mapstructure:"delivery"`
	// KnownHostsFile is the default known_hosts for SSH environments
	// ("" means ~/.ssh/known_hosts).
	KnownHostsFile string `mapstructure:"known_hosts_file"`
	// HeartbeatInterval is how often a running task's heartbeat is written
	// to the store (default 10 s); the worker also learns there that a task
	// was cancelled.
	HeartbeatInterval time.Duration `mapstructure:"heartbeat_interval"`
	// StaleAfter is how old a running task's heartbeat must be before
	// another worker may take it over (default 45 s; > HeartbeatInterval).
	StaleAfter time.Duration `mapstructure:"stale_after"`
	// DrainGrace is how long a stopping worker lets running sessions finish
	// before it aborts them and hands them back (default 30 s).
	DrainGrace time.Duration `mapstructure:"drain_grace"`
	// RetryBackoff is the nak delay of a retryable failure without a
	// provider retry-after, doubled per delivery up to MaxRetryBackoff
	// (defaults 5 s and 5 min).
	RetryBackoff    time.Duration `mapstructure:"retry_backoff"`
	MaxRetryBackoff time.Duration `mapstructure:"max_retry_backoff"`
	// Retry is the llm retry policy of every provider client (zero: llm's
	// defaults). A rate limit longer than Retry.MaxRetryAfter is handed back
	// to the queue with the provider's delay instead of being waited out.
	Retry llm.RetryPolicy `mapstructure:"-"`
	// MaxLiveChildren caps the unfinished children of one task when its spec
	// says nothing (default 32).
	MaxLiveChildren int `mapstructure:"max_live_children"`
	// MaxOutputTokens is the max_output_tokens of a model answer when the
	// spec's session sets none (0: agent.DefaultMaxOutputTokens); it is
	// lowered to each model's own maximum.
	MaxOutputTokens int `mapstructure:"max_output_tokens"`
	// Sandbox says how local tasks' commands run (see
	// fleet/internal/tasksandbox and docs/operations.md): "on" (the default) under bubblewrap, local
	// tasks being refused where it cannot run; "off" unconfined, as the
	// worker's user; "auto" on where bubblewrap runs, else off (dev mode).
	Sandbox string `mapstructure:"sandbox"`
	// SandboxBound is the widest sandbox a task may ask for
	// (sandbox_network, sandbox_allow_hosts).
	SandboxBound fleet.SandboxBound `mapstructure:",squash"`
	// SandboxReadOnly are further paths sandboxed commands and file tools
	// may read (absolute): a shared toolchain or cache.
	SandboxReadOnly []string `mapstructure:"sandbox_read_only"`
	// SandboxWritable are directories every sandbox may write, shared by
	// all tasks (a build cache you trust them with); SandboxEnv are
	// variables every sandboxed command gets (GOCACHE pointing there).
	SandboxWritable []string          `mapstructure:"sandbox_writable"`
	SandboxEnv      map[string]string `mapstructure:"sandbox_env"`
	// SandboxIsolation is sandbox_uid_range and sandbox_limits.
	SandboxIsolation `mapstructure:",squash"`
	// DeltaWindow and DeltaMaxBytes merge a session's text deltas before
	// they are published: one event per window or per that much text,
	// whichever comes first, the first delta of an answer at once (defaults
	// 50 ms and 1024 bytes; a negative window publishes every delta; see
	// fleet/internal/coalesce).
	DeltaWindow   time.Duration `mapstructure:"event_delta_window"`
	DeltaMaxBytes int           `mapstructure:"event_delta_max_bytes"`
	// Policy bounds what a task spec may ask of this worker (limits, command
	// timeouts, environment policy, web_fetch and its hosts); a spec beyond
	// it fails with not_allowed. The dispatcher has its own (checked at
	// submission); this one is the worker operator's.
	Policy fleet.Policy `mapstructure:"policy"`
	// Permissions is the operator's permission policy (package
	// agent/permission): every task's calls are checked against it, and a
	// task's spec may only narrow it. The zero value allows every call but
	// asks a person about destructive shell commands and never lets an
	// edit touch .git/ and the other protected directories.
	Permissions permission.Policy `mapstructure:"permissions"`
	// ApprovalTimeout is how long a call waiting for a person's approval
	// waits before it is denied (default 24 h).
	ApprovalTimeout time.Duration `mapstructure:"approval_timeout"`
	// NoDeadLetterWatch turns off the dead-letter watcher this worker runs
	// (every worker runs one by default; they share one durable consumer).
	NoDeadLetterWatch bool `mapstructure:"no_dead_letter_watch"`
	// KnownSecrets are further secret values (name → value) the worker
	// redacts from tool outputs, besides those it finds itself (see
	// redactor): `worker run` puts the database and NATS passwords here.
	// Not a configuration key.
	KnownSecrets map[string]string `mapstructure:"-"`
	// ExtensionsConfig bounds MCP servers, hooks and skills (package
	// fleet/extensions); its keys sit at the top level.
	ExtensionsConfig `mapstructure:",squash"`
	// OutboundAllowPrivate lists the internal addresses ("10.0.0.5") and
	// prefixes ("10.20.0.0/16") this worker's outbound requests may reach:
	// forge APIs, HTTP MCP servers, http hooks and the sandbox's egress
	// proxy. Every other loopback, private, link-local, CGNAT or NAT64
	// address is refused after resolution (internal/outbound). Empty by
	// default; a task's spec cannot widen it. web_fetch never gets it.
	OutboundAllowPrivate []string `mapstructure:"outbound_allow_private"`
	// ImageCache is image_cache: environment images (image.go).
	ImageCache ImageCacheConfig `mapstructure:"image_cache"`
	// GitStore is the fleet git store (gitstore.go): subagents on any worker.
	GitStore GitStoreConfig `mapstructure:"git_store"`
	// RepoCache is repo_cache: repository mirrors and setup snapshots
	// (mirror.go, setup.go).
	RepoCache RepoCacheConfig `mapstructure:"repo_cache"`
}

// allowPrivate is OutboundAllowPrivate parsed (Validate reports errors).
func (c Config) allowPrivate() []netip.Prefix {
	p, _ := outbound.ParsePrefixes("outbound_allow_private", c.OutboundAllowPrivate)
	return p
}

// ExtensionsConfig is the operator's bounds on MCP servers, hooks and
// skills (extensions.Config), embedded in Config.
type ExtensionsConfig = extensions.Config

// DefaultWorkerMaxLiveChildren is Config.MaxLiveChildren's default.
const DefaultWorkerMaxLiveChildren = 32

// WithDefaults returns a copy with every zero field set to its default.
func (c Config) WithDefaults() Config {
	if c.ID == "" {
		host, _ := os.Hostname()
		c.ID = sanitizeToken(fmt.Sprintf("%s-%d", host, os.Getpid()))
	}
	if len(c.Queues) == 0 {
		c.Queues = []string{fleet.DefaultQueue}
	}
	setZero(&c.Sessions, DefaultSessions)
	if c.WorkspaceRoot == "" {
		c.WorkspaceRoot = filepath.Join(os.TempDir(), "agentfleet-workspaces")
	}
	setZero(&c.KeepFailed, DefaultKeepFailed)
	setZero(&c.HeartbeatInterval, DefaultHeartbeatInterval)
	setZero(&c.StaleAfter, DefaultStaleAfter)
	setZero(&c.DrainGrace, DefaultDrainGrace)
	setZero(&c.RetryBackoff, DefaultRetryBackoff)
	setZero(&c.MaxRetryBackoff, DefaultMaxRetryBackoff)
	setZero(&c.MaxLiveChildren, DefaultWorkerMaxLiveChildren)
	setZero(&c.ApprovalTimeout, fleet.DefaultApprovalTimeout)
	return c
}

func setZero[T comparable](f *T, def T) {
	var zero T
	if *f == zero {
		*f = def
	}
}

// sanitizeToken replaces characters a NATS subject token cannot hold.
func sanitizeToken(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			b[i] = '-'
		}
	}
	if len(b) > 128 {
		b = b[:128]
	}
	return string(b)
}

// Validate reports every invalid field, naming it.
func (c Config) Validate() error {
	var errs []error
	check := func(ok bool, format string, a ...any) {
		if !ok {
			errs = append(errs, fmt.Errorf(format, a...))
		}
	}
	check(queue.CheckWorkerID(c.ID) == nil, "worker_id %q must be 1 to 128 letters, digits, '-' or '_'", c.ID)
	check(len(c.Queues) > 0, "queues must name at least one queue")
	for _, q := range c.Queues {
		check(queue.CheckQueueName(q) == nil, "queues entry %q must be letters, digits, '-' or '_' and not \"worker\"", q)
	}
	errs = append(errs, c.checkTenants()...)
	check(c.Sessions >= 1, "sessions must be >= 1, got %d", c.Sessions)
	if err := c.GitStore.check(); err != nil { // gitstore.go
		errs = append(errs, err)
	}
	errs = append(errs, c.checkKeys()...)
	for p, n := range c.LLMConcurrency {
		check(n >= 1, "llm_concurrency.%s must be >= 1, got %d", p, n)
	}
	check(filepath.IsAbs(c.WorkspaceRoot), "workspace_root must be an absolute path, got %q", c.WorkspaceRoot)
	check(c.HeartbeatInterval > 0, "heartbeat_interval must be > 0, got %s", c.HeartbeatInterval)
	check(c.StaleAfter > c.HeartbeatInterval, "stale_after (%s) must exceed heartbeat_interval (%s)", c.StaleAfter, c.HeartbeatInterval)
	check(c.DrainGrace >= 0, "drain_grace must be >= 0, got %s", c.DrainGrace)
	check(c.RetryBackoff > 0 && c.MaxRetryBackoff >= c.RetryBackoff, "retry_backoff (%s) must be > 0 and <= max_retry_backoff (%s)", c.RetryBackoff, c.MaxRetryBackoff)
	check(c.MaxLiveChildren >= 1, "max_live_children must be >= 1, got %d", c.MaxLiveChildren)
	check(c.MaxOutputTokens >= 0, "max_output_tokens must be >= 0 (0: the built-in default), got %d", c.MaxOutputTokens)
	check(c.DeltaMaxBytes >= 0, "event_delta_max_bytes must be >= 0 (0: 1024), got %d", c.DeltaMaxBytes)
	for _, p := range c.AllowedProfiles {
		check(slices.Contains(fleet.KnownProfiles, p), "allowed_profiles entry %q is unknown, want one of %v", p, fleet.KnownProfiles)
	}
	for name, p := range c.Providers {
		check(slices.Contains(fleet.KnownProfiles, name), "providers.%s: the key must be a profile name, one of %v", name, fleet.KnownProfiles)
		check(p.InputPerMTok >= 0 && p.OutputPerMTok >= 0, "providers.%s prices must be >= 0", name)
		for choice, cp := range p.Choices {
			check(choice != "" && len(cp.Choices) == 0, "providers.%s.choices.%s must be named and have no choices of its own", name, choice)
			check(cp.InputPerMTok >= 0 && cp.OutputPerMTok >= 0, "providers.%s.choices.%s prices must be >= 0", name, choice)
		}
	}
	for i, r := range c.RateLimits {
		if err := r.Validate(fmt.Sprintf("rate_limits[%d]", i)); err != nil {
			errs = append(errs, err)
		}
	}
	if _, err := pricing.Override(nil, c.Prices); err != nil {
		errs = append(errs, err)
	}
	for ref, k := range c.SSHKeys {
		check(ref != "", "ssh_keys has an empty key reference")
		check(k.KeyFile != "" || k.UseAgent, "ssh_keys.%s needs key_file or use_agent", ref)
		if k.KeyFile != "" {
			_, err := os.Stat(k.KeyFile)
			check(err == nil, "ssh_keys.%s.key_file %q cannot be read: %v", ref, k.KeyFile, err)
		}
		if err := k.DeliveryScope.Validate("ssh_keys." + ref); err != nil {
			errs = append(errs, err)
		}
	}
	if err := c.Policy.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("policy.%w", err))
	}
	if err := c.Permissions.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("permissions.%w", err))
	}
	check(c.ApprovalTimeout > 0, "approval_timeout must be > 0, got %s", c.ApprovalTimeout)
	if err := c.Delivery.Validate(); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, c.ExtensionsConfig.Validate()...)
	if _, err := outbound.ParsePrefixes("outbound_allow_private", c.OutboundAllowPrivate); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, c.SandboxIsolation.validate(), c.sandboxOperator().Validate(), c.ImageCache.Validate(), c.RepoCache.Validate(c.WorkspaceRoot))
	if err := c.Retry.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("retry: %w", err))
	}
	return errors.Join(errs...)
}

// concurrencyFor returns the LLM concurrency of a provider.
func (c Config) concurrencyFor(provider string) int {
	if n, ok := c.LLMConcurrency[provider]; ok {
		return n
	}
	return DefaultLLMConcurrency
}

// serves says which profiles this worker can run and with which default
// model, for the start-up log: "anthropic (claude-sonnet-4-5 via bedrock)".
// A profile without providers configuration uses its provider's key from
// the environment and the profile's own default model.
func (c Config) serves() []string {
	names := slices.Sorted(maps.Keys(c.Providers))
	if len(c.AllowedProfiles) > 0 {
		names = c.AllowedProfiles
	}
	if len(names) == 0 {
		return []string{"anthropic, openai, gemini (keys from the environment, the profiles' default models)"}
	}
	out := make([]string, len(names))
	for i, n := range names {
		pc, ok := c.Providers[n]
		model, via := pc.DefaultModel, pc.Provider
		if model == "" {
			model = "the profile's default model"
		}
		if !ok {
			via = "its key from the environment"
		} else if via == "" {
			via = n
		}
		out[i] = fmt.Sprintf("%s (%s via %s)", n, model, via)
	}
	return out
}
