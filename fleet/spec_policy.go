package fleet

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Policy is an operator's bound on what task specs may ask for, set in the
// dispatcher's configuration (checked at submission, a 400 naming the
// field and the bound) and in the worker's (checked again before a session
// starts, so a worker never runs beyond its own operator's policy). A spec
// may lower every default and raise it only up to the maximum here.
type Policy struct {
	// MaxTurns, MaxToolRounds, MaxWallTime, MaxTokens and MaxCostUSD are
	// the largest limits a spec may ask for; zero has no maximum. A spec's
	// zero limit takes the maximum when the default is unbounded or larger.
	MaxTurns      int           `mapstructure:"max_turns"`
	MaxToolRounds int           `mapstructure:"max_tool_rounds"`
	MaxWallTime   time.Duration `mapstructure:"max_wall_time"`
	MaxTokens     int64         `mapstructure:"max_tokens"`
	MaxCostUSD    float64       `mapstructure:"max_cost_usd"`
	// MaxCommandTimeout is the largest session.max_command_timeout (and so
	// command timeout) a spec may ask for; 0 means DefaultOperatorMaxCommand.
	MaxCommandTimeout time.Duration `mapstructure:"max_command_timeout"`
	// EnvPolicy is the widest environment policy a spec may ask for, and
	// the default of a spec that names none: inherit-all (the default),
	// core-only or none.
	EnvPolicy string `mapstructure:"env_policy"`
	// WebFetch allows specs to turn web_fetch on (default off).
	WebFetch bool `mapstructure:"web_fetch"`
	// WebFetchHosts, when not empty, are the only hosts web_fetch may reach
	// (a name also allows its subdomains); a spec may only narrow them.
	WebFetchHosts []string `mapstructure:"web_fetch_hosts"`
	// SharedRoots are the directories (absolute) a local spec's
	// environment.working_dir may lie under; empty allows no working_dir
	// and no shared in a submission (spec_paths.go).
	SharedRoots []string `mapstructure:"shared_roots"`
	// Repositories bound environment.repo: allowed hosts and path
	// prefixes, local directories, internal addresses (spec_paths.go).
	Repositories Repositories `mapstructure:"repositories"`
	// Images bound environment.image and give its default (spec_image.go).
	Images ImagePolicy `mapstructure:"images"`
	// TenantQueues bound the queues each tenant's tasks may use, and give
	// the queue of a spec that names none (spec_policy_tenants.go).
	TenantQueues TenantQueues `mapstructure:"tenant_queues"`
}

// MaxLimits are the policy's maxima as Limits (zero: no maximum).
func (p Policy) MaxLimits() Limits {
	return Limits{MaxTurns: p.MaxTurns, MaxToolRounds: p.MaxToolRounds, WallTime: Duration(p.MaxWallTime),
		MaxTokens: p.MaxTokens, MaxCostUSD: p.MaxCostUSD}
}

// WithDefaults returns p with its zero fields set to their defaults.
func (p Policy) WithDefaults() Policy {
	if p.MaxCommandTimeout == 0 {
		p.MaxCommandTimeout = DefaultOperatorMaxCommand
	}
	if p.EnvPolicy == "" {
		p.EnvPolicy = EnvPolicies[0]
	}
	return p
}

// Validate reports a policy that is not valid, naming its configuration key.
func (p Policy) Validate() error {
	p = p.WithDefaults()
	switch {
	case p.MaxCommandTimeout < time.Second:
		return fmt.Errorf("max_command_timeout must be at least 1s, got %s", p.MaxCommandTimeout)
	case !slices.Contains(EnvPolicies, p.EnvPolicy):
		return fmt.Errorf("env_policy %q is unknown, want one of %s", p.EnvPolicy, strings.Join(EnvPolicies, ", "))
	case len(p.WebFetchHosts) > 0 && !p.WebFetch:
		return fmt.Errorf("web_fetch_hosts is set but web_fetch is off")
	}
	if err := p.MaxLimits().check(); err != nil {
		name := strings.TrimPrefix(err.Field, "spec.limits.")
		if !strings.HasPrefix(name, "max_") {
			name = "max_" + name
		}
		return fmt.Errorf("%s must be >= 0", name)
	}
	if err := p.Images.Validate("images"); err != nil {
		return err
	}
	if err := p.TenantQueues.Validate(); err != nil {
		return err
	}
	return p.validatePaths()
}

// ApplyLimits returns l with its zero fields taken from def, where a
// default above the operator's maximum (or unbounded while a maximum is
// set) is lowered to the maximum.
func (p Policy) ApplyLimits(l, def Limits) Limits {
	m := p.MaxLimits()
	capInt := func(d *int, max int) {
		if max > 0 && (*d == 0 || *d > max) {
			*d = max
		}
	}
	capInt(&def.MaxTurns, m.MaxTurns)
	capInt(&def.MaxToolRounds, m.MaxToolRounds)
	if m.WallTime > 0 && (def.WallTime == 0 || def.WallTime > m.WallTime) {
		def.WallTime = m.WallTime
	}
	if m.MaxTokens > 0 && (def.MaxTokens == 0 || def.MaxTokens > m.MaxTokens) {
		def.MaxTokens = m.MaxTokens
	}
	if m.MaxCostUSD > 0 && (def.MaxCostUSD == 0 || def.MaxCostUSD > m.MaxCostUSD) {
		def.MaxCostUSD = m.MaxCostUSD
	}
	return l.Within(def)
}

// Check reports the first field of s beyond the policy, naming the field
// and the bound. s has its limits filled (ApplyLimits).
func (p Policy) Check(s TaskSpec) error {
	p = p.WithDefaults()
	if err := p.checkLimits(s.Limits); err != nil {
		return err
	}
	if err := p.checkSession(s.Session); err != nil {
		return err
	}
	if err := p.checkEnvironment(s); err != nil {
		return err
	}
	if err := p.checkImage(s); err != nil {
		return err
	}
	if err := p.TenantQueues.check(s); err != nil {
		return err
	}
	return nil
}

func (p Policy) checkLimits(l Limits) *FieldError {
	m := p.MaxLimits()
	over := func(v, max int64) bool { return max > 0 && (v == 0 || v > max) }
	switch {
	case over(int64(l.MaxTurns), int64(m.MaxTurns)):
		return fieldErr("limits.max_turns", "%d is above the operator's maximum of %d", l.MaxTurns, m.MaxTurns)
	case over(int64(l.MaxToolRounds), int64(m.MaxToolRounds)):
		return fieldErr("limits.max_tool_rounds", "%d is above the operator's maximum of %d", l.MaxToolRounds, m.MaxToolRounds)
	case over(int64(l.WallTime), int64(m.WallTime)):
		return fieldErr("limits.wall_time", "%s is above the operator's maximum of %s", time.Duration(l.WallTime), time.Duration(m.WallTime))
	case over(l.MaxTokens, m.MaxTokens):
		return fieldErr("limits.max_tokens", "%d is above the operator's maximum of %d", l.MaxTokens, m.MaxTokens)
	case m.MaxCostUSD > 0 && (l.MaxCostUSD == 0 || l.MaxCostUSD > m.MaxCostUSD):
		return fieldErr("limits.max_cost_usd", "%v is above the operator's maximum of %v", l.MaxCostUSD, m.MaxCostUSD)
	}
	return nil
}

func (p Policy) checkSession(s Session) *FieldError {
	switch {
	case time.Duration(s.MaxCommandTimeout) > p.MaxCommandTimeout:
		return fieldErr("session.max_command_timeout", "%s is above the operator's maximum of %s",
			time.Duration(s.MaxCommandTimeout), p.MaxCommandTimeout)
	case time.Duration(s.CommandTimeout) > p.MaxCommandTimeout:
		return fieldErr("session.command_timeout", "%s is above the operator's maximum of %s",
			time.Duration(s.CommandTimeout), p.MaxCommandTimeout)
	case s.EnvPolicy != "" && slices.Index(EnvPolicies, s.EnvPolicy) < slices.Index(EnvPolicies, p.EnvPolicy):
		return fieldErr("session.env_policy", "%q is wider than the operator allows (%s); ask for %s",
			s.EnvPolicy, p.EnvPolicy, strings.Join(EnvPolicies[slices.Index(EnvPolicies, p.EnvPolicy):], " or "))
	}
	return p.checkWebFetch(s.WebFetch)
}

func (p Policy) checkWebFetch(w *WebFetch) *FieldError {
	if w == nil || !w.Enabled {
		return nil
	}
	if !p.WebFetch {
		return fieldErr("session.web_fetch.enabled", "web_fetch is not allowed by the operator (web_fetch is off)")
	}
	if len(p.WebFetchHosts) == 0 {
		return nil
	}
	if len(w.AllowedHosts) == 0 {
		return nil // the operator's hosts apply
	}
	for i, h := range w.AllowedHosts {
		if !HostAllowed(p.WebFetchHosts, h) {
			return fieldErr(fmt.Sprintf("session.web_fetch.allowed_hosts[%d]", i), "%q is outside the operator's allowed hosts (%s)",
				h, strings.Join(p.WebFetchHosts, ", "))
		}
	}
	return nil
}

// HostAllowed reports whether host is one of allowed or a subdomain of one
// (compared without case).
func HostAllowed(allowed []string, host string) bool {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	return slices.ContainsFunc(allowed, func(a string) bool {
		a = strings.ToLower(strings.TrimSuffix(a, "."))
		return host == a || strings.HasSuffix(host, "."+a)
	})
}

// EffectiveEnvPolicy is the environment policy a task runs with: its own,
// else the operator's.
func (p Policy) EffectiveEnvPolicy(s Session) string {
	if s.EnvPolicy != "" {
		return s.EnvPolicy
	}
	return p.WithDefaults().EnvPolicy
}

// EffectiveWebHosts are the hosts a task's web_fetch may reach: its own
// (already within the operator's by Check), else the operator's; empty
// means any public host.
func (p Policy) EffectiveWebHosts(s Session) []string {
	if s.WebFetch != nil && len(s.WebFetch.AllowedHosts) > 0 {
		return s.WebFetch.AllowedHosts
	}
	return p.WebFetchHosts
}
