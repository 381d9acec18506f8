package worker

import (
	"context"
	"fmt"
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

// This file maps a spec's session settings (fleet.Session) onto the
// session, its environment, its profile and its model client, within the
// worker's policy (Config.Policy).

// checkPolicy refuses a spec beyond the worker's policy for good.
func (r *run) checkPolicy() error {
	if err := r.w.cfg.Policy.Check(r.spec); err != nil {
		return fmt.Errorf("%w: %v", errNotAllowed, err)
	}
	return nil
}

// applySessionSettings copies the spec's session settings onto c.
func applySessionSettings(c *agent.SessionConfig, s fleet.Session) {
	c.DefaultCommandTimeout = time.Duration(s.CommandTimeout)
	c.MaxCommandTimeout = time.Duration(s.MaxCommandTimeout)
	c.ToolOutputLimits = maps.Clone(s.ToolOutputChars)
	c.ToolLineLimits = maps.Clone(s.ToolOutputLines)
	c.DisableLoopDetection = !s.LoopDetectionOn()
	c.LoopDetectionWindow = s.LoopDetectionWindow
	c.UserInstructions = s.UserInstructions
}

// envSettings are the environment policy and command timeout cap of the
// task's environment.
func (r *run) envSettings() (execenv.EnvPolicy, time.Duration) {
	max := time.Duration(r.spec.Session.MaxCommandTimeout)
	if max == 0 {
		max = fleet.DefaultMaxCommandTimeout
	}
	return execenv.EnvPolicy(r.w.cfg.Policy.EffectiveEnvPolicy(r.spec.Session)), max
}

// profileOptions are the profile options the spec's settings ask for:
// web_fetch, bounded by the effective allowed hosts.
func (r *run) profileOptions() ([]profiles.Option, error) {
	wf := r.spec.Session.WebFetch
	if wf == nil || !wf.Enabled {
		return nil, nil
	}
	var hosts []string
	for _, h := range r.w.cfg.Policy.EffectiveWebHosts(r.spec.Session) {
		hosts = append(hosts, h, "."+h) // the host and its subdomains
	}
	t, err := tools.WebFetch(tools.WebFetchConfig{Enabled: true, AllowedHosts: hosts})
	if err != nil {
		return nil, err
	}
	return []profiles.Option{profiles.WithTools(t)}, nil
}

// taskProfile is the task's profile with the spec's provider options
// merged into every request's.
type taskProfile struct {
	*profiles.Profile
	extra llm.ProviderOptions
}

// newTaskProfile returns p itself when the spec has no provider options.
func newTaskProfile(p *profiles.Profile, o *fleet.ProviderOptions) agent.Profile {
	extra := specProviderOptions(o)
	if len(extra) == 0 {
		return p
	}
	return taskProfile{Profile: p, extra: extra}
}

// specProviderOptions maps the spec's options to llm.ProviderOptions keys:
// chatcompat echo_reasoning, anthropic beta_headers.
func specProviderOptions(o *fleet.ProviderOptions) llm.ProviderOptions {
	out := llm.ProviderOptions{}
	if o == nil {
		return out
	}
	cc := map[string]any{}
	if o.EchoReasoning != nil {
		cc["echo_reasoning"] = *o.EchoReasoning
	}
	if len(cc) > 0 {
		out["chatcompat"] = cc
	}
	if len(o.AnthropicBeta) > 0 {
		out["anthropic"] = map[string]any{"beta_headers": append([]string(nil), o.AnthropicBeta...)}
	}
	return out
}

// ProviderOptions returns the profile's options with the spec's merged in
// (Anthropic beta headers are added to the profile's).
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

// headerClient sends the spec's extra headers with every model request.
type headerClient struct {
	inner  llm.Client
	header http.Header
}

// taskClient wraps c with the spec's extra headers, if any.
func (r *run) taskClient(c llm.Client) llm.Client {
	o := r.spec.Session.ProviderOptions
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
