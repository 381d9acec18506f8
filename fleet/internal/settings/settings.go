package settings

import (
	"context"
	"iter"
	"maps"
	"net/http"
	"time"

	"github.com/agentfleet/agentfleet/agent"
	"github.com/agentfleet/agentfleet/execenv"
	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/profiles"
	"github.com/agentfleet/agentfleet/tools"
)

// Apply copies the spec's session settings onto c.
func Apply(c *agent.SessionConfig, s fleet.Session) {
	c.DefaultCommandTimeout = time.Duration(s.CommandTimeout)
	c.MaxCommandTimeout = time.Duration(s.MaxCommandTimeout)
	c.ToolOutputLimits = maps.Clone(s.ToolOutputChars)
	c.ToolLineLimits = maps.Clone(s.ToolOutputLines)
	c.DisableLoopDetection = !s.LoopDetectionOn()
	c.LoopDetectionWindow = s.LoopDetectionWindow
	c.UserInstructions = s.UserInstructions
	c.NoProgressRounds = s.NoProgressRounds
	c.MaxOutputTokens = s.MaxOutputTokens
}

// Env returns the environment policy and the command timeout cap of the
// task's execution environment.
func Env(s fleet.Session, p fleet.Policy) (execenv.EnvPolicy, time.Duration) {
	max := time.Duration(s.MaxCommandTimeout)
	if max == 0 {
		max = fleet.DefaultMaxCommandTimeout
	}
	return execenv.EnvPolicy(p.EffectiveEnvPolicy(s)), max
}

// ProfileOptions are the profile options the settings ask for: web_fetch,
// bounded by the effective allowed hosts (a host and its subdomains).
func ProfileOptions(s fleet.Session, p fleet.Policy) ([]profiles.Option, error) {
	if s.WebFetch == nil || !s.WebFetch.Enabled {
		return nil, nil
	}
	var hosts []string
	for _, h := range p.EffectiveWebHosts(s) {
		hosts = append(hosts, h, "*."+h)
	}
	t, err := tools.WebFetch(tools.WebFetchConfig{Enabled: true, AllowedHosts: hosts})
	if err != nil {
		return nil, err
	}
	return []profiles.Option{profiles.WithTools(t)}, nil
}

// taskProfile is a profile with the spec's provider options merged into
// every request's.
type taskProfile struct {
	*profiles.Profile
	extra llm.ProviderOptions
}

// Profile returns p with the spec's provider options merged into every
// request's, or p itself when there are none.
func Profile(p *profiles.Profile, o *fleet.ProviderOptions) agent.Profile {
	extra := providerOptions(o)
	if len(extra) == 0 {
		return p
	}
	return taskProfile{Profile: p, extra: extra}
}

// providerOptions maps the spec's options to llm.ProviderOptions keys:
// chatcompat echo_reasoning, anthropic beta_headers.
func providerOptions(o *fleet.ProviderOptions) llm.ProviderOptions {
	out := llm.ProviderOptions{}
	if o == nil {
		return out
	}
	if o.EchoReasoning != nil {
		out["chatcompat"] = map[string]any{"echo_reasoning": *o.EchoReasoning}
	}
	if len(o.AnthropicBeta) > 0 {
		out["anthropic"] = map[string]any{"beta_headers": append([]string(nil), o.AnthropicBeta...)}
	}
	return out
}

// ProviderOptions returns the profile's options with the spec's merged in;
// Anthropic beta headers are added to the profile's own.
func (p taskProfile) ProviderOptions(effort string) llm.ProviderOptions {
	base := p.Profile.ProviderOptions(effort)
	out := make(llm.ProviderOptions, len(base)+len(p.extra))
	for k, m := range base {
		out[k] = maps.Clone(m)
	}
	for k, m := range p.extra {
		dst := out[k]
		if dst == nil {
			dst = map[string]any{}
			out[k] = dst
		}
		for key, v := range m {
			if prev, ok := dst[key].([]string); ok && key == "beta_headers" {
				v = append(append([]string(nil), prev...), v.([]string)...)
			}
			dst[key] = v
		}
	}
	return out
}

// headerClient sends extra headers with every model request.
type headerClient struct {
	inner  llm.Client
	header http.Header
}

// Client returns c sending the spec's extra headers, or c itself when
// there are none.
func Client(c llm.Client, o *fleet.ProviderOptions) llm.Client {
	if o == nil || len(o.Headers) == 0 {
		return c
	}
	h := http.Header{}
	for k, v := range o.Headers {
		h.Set(k, v)
	}
	return headerClient{inner: c, header: h}
}

func (c headerClient) Complete(ctx context.Context, req llm.Request) (*llm.Response, error) {
	return c.inner.Complete(llm.WithExtraHeaders(ctx, c.header), req)
}

func (c headerClient) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.StreamEvent, error] {
	return c.inner.Stream(llm.WithExtraHeaders(ctx, c.header), req)
}
