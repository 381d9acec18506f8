package ratelimit

import (
	"fmt"
	"strings"
)

// Key names what a provider rate-limits. With a Tenant it names that
// tenant's share of the provider key (see tenant.go).
type Key struct {
	Provider   string // anthropic, openai, gemini, chatcompat...
	Credential string // the operator's name for the API key (never the key)
	Model      string
	Tenant     string // the task's tenant; "" for the key itself
}

func (k Key) String() string {
	s := k.Provider + "/" + k.Credential + "/" + k.Model
	if k.Tenant != "" {
		s += "@" + k.Tenant
	}
	return s
}

// Limits are one key's rates; 0 leaves a dimension unlimited.
type Limits struct {
	RequestsPerMinute     float64 `json:"rpm,omitempty" mapstructure:"requests_per_minute"`
	InputTokensPerMinute  float64 `json:"itpm,omitempty" mapstructure:"input_tokens_per_minute"`
	OutputTokensPerMinute float64 `json:"otpm,omitempty" mapstructure:"output_tokens_per_minute"`
	ConcurrentRequests    int     `json:"conc,omitempty" mapstructure:"concurrent_requests"`
}

// Rule is one entry of the worker configuration's rate_limits.
type Rule struct {
	Provider   string `mapstructure:"provider"`
	Credential string `mapstructure:"credential"` // "" means "default"
	Model      string `mapstructure:"model"`      // "" covers every model
	// Tenant, when set, makes the rule a tenant's share of the key: the
	// requests of that tenant's tasks ("*": of each tenant, separately)
	// are limited by it as well as by the key's own rule.
	Tenant string `mapstructure:"tenant"`
	Limits `mapstructure:",squash"`
}

// DefaultCredential is the credential reference of a provider
// configuration that names none.
const DefaultCredential = "default"

// Validate refuses a rule without a provider, with a negative limit, or
// with no limit at all (a rate limit of zero); field names the rule in
// errors, e.g. "rate_limits[2]".
func (r Rule) Validate(field string) error {
	if r.Provider == "" {
		return fmt.Errorf("%s.provider is required (anthropic, openai, gemini...)", field)
	}
	l := r.Limits
	for _, f := range []struct {
		name string
		v    float64
	}{
		{"requests_per_minute", l.RequestsPerMinute}, {"input_tokens_per_minute", l.InputTokensPerMinute},
		{"output_tokens_per_minute", l.OutputTokensPerMinute}, {"concurrent_requests", float64(l.ConcurrentRequests)},
	} {
		if f.v < 0 || f.v != f.v {
			return fmt.Errorf("%s.%s must be > 0, got %v", field, f.name, f.v)
		}
	}
	if l == (Limits{}) {
		return fmt.Errorf("%s sets no limit: a rate limit of zero would stop every request; set requests_per_minute, input_tokens_per_minute, output_tokens_per_minute or concurrent_requests above 0, or remove the rule", field)
	}
	return nil
}

// Rules finds the limits of a key: the rule naming its model, else the
// rule for every model of its provider and credential. A key with a
// tenant takes the tenant rules only: one naming its tenant before one
// for every tenant ("*"), then by model as above; a key without one takes
// the rules without a tenant only.
type Rules []Rule

// For returns the limits of k and whether any rule covers it.
func (rs Rules) For(k Key) (Limits, bool) {
	best, bestScore := -1, 0
	for i := range rs {
		if sc := rs[i].score(k); sc > bestScore {
			best, bestScore = i, sc
		}
	}
	if best < 0 {
		return Limits{}, false
	}
	return rs[best].Limits, true
}

// score ranks how closely r covers k: 0 when it does not; a named tenant
// counts more than "*", a named model more than every model.
func (r Rule) score(k Key) int {
	cred := r.Credential
	if cred == "" {
		cred = DefaultCredential
	}
	if !strings.EqualFold(r.Provider, k.Provider) || cred != k.Credential {
		return 0
	}
	sc := 1
	switch {
	case r.Tenant == "" && k.Tenant == "":
	case k.Tenant == "" || r.Tenant == "":
		return 0
	case r.Tenant == k.Tenant:
		sc += 4
	case r.Tenant != "*":
		return 0
	}
	switch r.Model {
	case k.Model:
		sc += 2
	case "", "*":
	default:
		return 0
	}
	return sc
}

// lower returns l with each dimension of o that is set and lower taken.
func (l Limits) lower(o Limits) Limits {
	low := func(a, b float64) float64 {
		if b > 0 && (a == 0 || b < a) {
			return b
		}
		return a
	}
	l.RequestsPerMinute = low(l.RequestsPerMinute, o.RequestsPerMinute)
	l.InputTokensPerMinute = low(l.InputTokensPerMinute, o.InputTokensPerMinute)
	l.OutputTokensPerMinute = low(l.OutputTokensPerMinute, o.OutputTokensPerMinute)
	if o.ConcurrentRequests > 0 && (l.ConcurrentRequests == 0 || o.ConcurrentRequests < l.ConcurrentRequests) {
		l.ConcurrentRequests = o.ConcurrentRequests
	}
	return l
}
