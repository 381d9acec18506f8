package profiles

import (
	"fmt"
	"strings"
	"time"

	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/tools"
)

// Profile is a provider-aligned profile: a model, the tools that
// model was trained on, its system prompt and its request options. It
// implements agent.Profile. A Profile is safe for concurrent use; sessions
// clone its registry, so register custom tools on the profile before
// creating sessions (or on a session's own registry).
type Profile struct {
	id       string
	model    string
	registry *tools.Registry
	// docFiles are the project instruction files this profile loads, in
	// order, at each directory level.
	docFiles []string
	base     string // name of the base-instructions template
	caps     Capabilities
	shell    time.Duration // default shell timeout
	now      func() time.Time
	options  func(effort string) llm.ProviderOptions
	beta     []string
	// unknownWindow: the model is not in the table, so its window is the
	// conservative default until an option names one.
	unknownWindow bool
	summaryModel  string
	// providerTools are the provider's own tools offered on every request
	// (OfferProviderTools).
	providerTools []llm.ToolDefinition
}

// Capabilities are a profile's capability flags.
type Capabilities struct {
	Reasoning         bool `json:"supports_reasoning"`
	Streaming         bool `json:"supports_streaming"`
	ParallelToolCalls bool `json:"supports_parallel_tool_calls"`
	// ContextWindow is the model's context size in tokens.
	ContextWindow int `json:"context_window_size"`
}

// Option adjusts a profile at construction.
type Option func(*Profile)

// WithClock fixes the clock used for the date in the prompt.
func WithClock(now func() time.Time) Option { return func(p *Profile) { p.now = now } }

// WithContextWindow overrides the context window size in tokens.
func WithContextWindow(tokens int) Option {
	return func(p *Profile) { p.caps.ContextWindow, p.unknownWindow = tokens, false }
}

// WithUnknownModelWindow sets the window used when the model is not in the
// profile's table (DefaultUnknownContextWindow otherwise); a known model
// keeps its own.
func WithUnknownModelWindow(tokens int) Option {
	return func(p *Profile) {
		if p.unknownWindow && tokens > 0 {
			p.caps.ContextWindow = tokens
		}
	}
}

// WithSummaryModel names a cheaper model of the same provider that writes
// the session's context summaries ("" means the session's model).
func WithSummaryModel(model string) Option { return func(p *Profile) { p.summaryModel = model } }

// WithParallelToolCalls turns concurrent read-only tool calls on or off.
func WithParallelToolCalls(on bool) Option { return func(p *Profile) { p.caps.ParallelToolCalls = on } }

// WithStreaming turns streaming on or off (off uses Client.Complete).
func WithStreaming(on bool) Option { return func(p *Profile) { p.caps.Streaming = on } }

// WithBetaHeaders adds Anthropic beta headers (for example the 1M-token
// context beta) to every request; other profiles ignore them.
func WithBetaHeaders(headers ...string) Option {
	return func(p *Profile) { p.beta = append(p.beta, headers...) }
}

// WithTools registers extra tools on top of the profile's (latest wins).
func WithTools(ts ...tools.Tool) Option {
	return func(p *Profile) {
		for _, t := range ts {
			p.registry.Register(t)
		}
	}
}

// ForProvider returns the profile for a provider name: "openai",
// "anthropic", "gemini", or "chatcompat" (OpenAI-compatible servers such as
// Ollama, vLLM or llama.cpp, which get the openai profile's tools).
func ForProvider(provider, model string, opts ...Option) (*Profile, error) {
	switch strings.ToLower(provider) {
	case "openai", "chatcompat", "openai-compatible":
		return OpenAI(model, opts...), nil
	case "anthropic":
		return Anthropic(model, opts...), nil
	case "gemini", "google":
		return Gemini(model, opts...), nil
	}
	return nil, fmt.Errorf("profiles: unknown provider %q: use openai, anthropic, gemini or chatcompat", provider)
}

// All returns every profile, each with its default model and opts: what a
// check that must hold for every profile's tools walks.
func All(opts ...Option) []*Profile {
	return []*Profile{OpenAI("", opts...), Anthropic("", opts...), Gemini("", opts...)}
}

func (p *Profile) apply(opts []Option) *Profile {
	if p.now == nil {
		p.now = time.Now
	}
	for _, o := range opts {
		o(p)
	}
	return p
}

// ID is "openai", "anthropic" or "gemini".
func (p *Profile) ID() string { return p.id }

// Model is the profile's model identifier.
func (p *Profile) Model() string { return p.model }

// Registry holds the profile's tools; register custom tools here (latest wins).
func (p *Profile) Registry() *tools.Registry { return p.registry }

// Tools returns the model-facing tool definitions.
func (p *Profile) Tools() []llm.ToolDefinition { return p.registry.Definitions() }

// Capabilities returns the capability flags.
func (p *Profile) Capabilities() Capabilities { return p.caps }

// SupportsReasoning reports whether the model family has a reasoning mode.
func (p *Profile) SupportsReasoning() bool { return p.caps.Reasoning }

// SupportsStreaming reports whether sessions stream responses.
func (p *Profile) SupportsStreaming() bool { return p.caps.Streaming }

// SupportsParallelToolCalls reports whether read-only calls may run concurrently.
func (p *Profile) SupportsParallelToolCalls() bool { return p.caps.ParallelToolCalls }

// ContextWindow is the model's context size in tokens.
func (p *Profile) ContextWindow() int { return p.caps.ContextWindow }

// SummaryModel is the model that writes context summaries ("" means the
// session's model).
func (p *Profile) SummaryModel() string { return p.summaryModel }

// Default shell timeouts of the profiles, stated by their shell tools
// until a session settles them with its own (tools.Settled).
const (
	defaultShellTimeout   = 10 * time.Second
	anthropicShellTimeout = 120 * time.Second
)

// DefaultCommandTimeout is the shell timeout when none is given: 10 s for
// openai and gemini, 120 s for anthropic.
func (p *Profile) DefaultCommandTimeout() time.Duration { return p.shell }

// DocFiles lists the project instruction files this profile loads.
func (p *Profile) DocFiles() []string { return append([]string(nil), p.docFiles...) }

// ProviderOptions returns the request options for effort ("" = provider default).
// The provider tools the profile offers ride along under the profile's
// own key (see OfferProviderTools).
func (p *Profile) ProviderOptions(effort string) llm.ProviderOptions {
	return p.withProviderTools(p.options(effort))
}
