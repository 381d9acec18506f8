package fleet

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// Session holds a task's session settings: how its commands time out, how
// much tool output reaches the model, loop detection, instructions added to
// the system prompt, the environment its commands see, web access, and the
// provider's options. Every zero field means the default documented next to
// it; an operator's Policy bounds what a spec may ask for.
type Session struct {
	// CommandTimeout is a shell call's timeout when the call names none
	// (default: the profile's, 10 s for openai and gemini, 120 s for
	// anthropic). At most MaxCommandTimeout.
	CommandTimeout Duration `json:"command_timeout,omitempty"`
	// MaxCommandTimeout caps any shell timeout, the model's own included
	// (default DefaultMaxCommandTimeout; at most the operator's maximum).
	MaxCommandTimeout Duration `json:"max_command_timeout,omitempty"`
	// ToolOutputChars and ToolOutputLines override, per tool name, how many
	// characters and lines of a tool's output the model sees (the rest is
	// cut with a marker). Names must be KnownToolNames.
	ToolOutputChars map[string]int `json:"tool_output_chars,omitempty"`
	ToolOutputLines map[string]int `json:"tool_output_lines,omitempty"`
	// LoopDetection turns loop detection off with false (default on).
	LoopDetection *bool `json:"loop_detection,omitempty"`
	// LoopDetectionWindow is how many recent tool calls are compared
	// (default 10).
	LoopDetectionWindow int `json:"loop_detection_window,omitempty"`
	// NoProgressRounds is how many tool rounds in a row may change nothing
	// (no new call that succeeds, no new output, no new failure) before the
	// model is told; half as many more stop the task with the reason
	// no_progress. 0: the default (8); -1 turns the watchdog off.
	NoProgressRounds int `json:"no_progress_rounds,omitempty"`
	// MaxOutputTokens bounds one model answer; 0: the operator's default.
	// It is lowered to the model's own maximum, and a tool call cut by it
	// is asked for again once with that maximum.
	MaxOutputTokens int `json:"max_output_tokens,omitempty"`
	// UserInstructions are appended last to the system prompt.
	UserInstructions string `json:"user_instructions,omitempty"`
	// EnvPolicy says which of the worker's environment variables commands
	// see: inherit-all (minus secret-looking names), core-only or none.
	// Default: the operator's policy; a spec may only narrow it.
	EnvPolicy string `json:"env_policy,omitempty"`
	// WebFetch offers the web_fetch tool (default off). The operator must
	// allow it, and its allowed hosts bound the spec's.
	WebFetch *WebFetch `json:"web_fetch,omitempty"`
	// Provider names which of the worker's providers for the task's profile
	// serves it (for example "bedrock" or "vertex" for anthropic); ""
	// means the profile's default provider.
	Provider string `json:"provider,omitempty"`
	// ProviderOptions adjust the requests to the provider.
	ProviderOptions *ProviderOptions `json:"provider_options,omitempty"`
}

// WebFetch turns the web_fetch tool on for a task.
type WebFetch struct {
	Enabled bool `json:"enabled"`
	// AllowedHosts are the only hosts it may fetch from (a name also
	// allows its subdomains); empty means every host the operator allows.
	AllowedHosts []string `json:"allowed_hosts,omitempty"`
}

// ProviderOptions adjust a task's model requests. None carries a secret:
// credentials are the worker's.
type ProviderOptions struct {
	// Headers are extra HTTP headers sent with every model request (for
	// example an OpenAI-compatible router's X-Title). Authentication
	// headers are refused.
	Headers map[string]string `json:"headers,omitempty"`
	// EchoReasoning (OpenAI-compatible servers) sends the model's reasoning
	// back between tool rounds (default true; some servers reject it).
	EchoReasoning *bool `json:"echo_reasoning,omitempty"`
	// AnthropicBeta are Anthropic beta headers added to every request.
	AnthropicBeta []string `json:"anthropic_beta,omitempty"`
}

// Defaults and bounds of Session.
const (
	DefaultMaxCommandTimeout   = 10 * time.Minute // Session.MaxCommandTimeout when zero
	DefaultOperatorMaxCommand  = time.Hour        // Policy.MaxCommandTimeout when zero
	MaxToolOutputChars         = 1_000_000
	MaxToolOutputLines         = 100_000
	DefaultLoopDetectionWindow = 10
	MaxLoopDetectionWindow     = 100
	MaxNoProgressRounds        = 1000
	MaxOutputTokensBound       = 1_000_000
	MaxUserInstructionsBytes   = 64 << 10
	MaxProviderHeaders         = 16
	MaxHeaderValueBytes        = 1024
	MaxAllowedHosts            = 64
)

// KnownToolNames are the tool names a per-tool output limit may name: the
// tools of every profile, web_fetch and the subagent tools.
var KnownToolNames = []string{
	"apply_patch", "close_agent", "edit_file", "glob", "grep", "list_dir", "read_file",
	"read_many_files", "send_input", "shell", "spawn_agent", "wait", "web_fetch", "write_file",
}

// EnvPolicies are the environment policies, widest first.
var EnvPolicies = []string{"inherit-all", "core-only", "none"}

// refusedHeaders carry credentials or framing; a spec may not set them.
var refusedHeaders = []string{"Authorization", "Proxy-Authorization", "X-Api-Key", "X-Goog-Api-Key", "Api-Key",
	"Cookie", "Content-Type", "Content-Length", "Host", "Accept", "X-Amz-Security-Token", "X-Amz-Date"}

// LoopDetectionOn reports whether loop detection is on (the default).
func (s Session) LoopDetectionOn() bool { return s.LoopDetection == nil || *s.LoopDetection }

// IsZero reports whether no setting is given (for omitzero).
func (s Session) IsZero() bool {
	return s.CommandTimeout == 0 && s.MaxCommandTimeout == 0 && len(s.ToolOutputChars) == 0 &&
		len(s.ToolOutputLines) == 0 && s.LoopDetection == nil && s.LoopDetectionWindow == 0 &&
		s.NoProgressRounds == 0 && s.MaxOutputTokens == 0 &&
		s.UserInstructions == "" && s.EnvPolicy == "" && s.WebFetch == nil && s.Provider == "" && s.ProviderOptions == nil
}

// check validates the settings on their own (the operator's bounds are
// Policy.Check's).
func (s Session) check() *FieldError {
	for _, c := range []func() *FieldError{s.checkTimeouts, s.checkToolLimits, s.checkLoop, s.checkText,
		s.checkWebFetch, s.checkProviderOptions} {
		if err := c(); err != nil {
			return err
		}
	}
	return nil
}

func (s Session) checkTimeouts() *FieldError {
	maxT := time.Duration(s.MaxCommandTimeout)
	if maxT == 0 {
		maxT = DefaultMaxCommandTimeout
	}
	switch {
	case s.CommandTimeout < 0:
		return fieldErr("session.command_timeout", "must be > 0, got %s", time.Duration(s.CommandTimeout))
	case s.MaxCommandTimeout < 0:
		return fieldErr("session.max_command_timeout", "must be > 0, got %s", time.Duration(s.MaxCommandTimeout))
	case time.Duration(s.CommandTimeout) > maxT:
		return fieldErr("session.command_timeout", "%s is more than max_command_timeout %s; raise session.max_command_timeout too",
			time.Duration(s.CommandTimeout), maxT)
	case s.CommandTimeout > 0 && s.CommandTimeout < Duration(time.Second):
		return fieldErr("session.command_timeout", "must be at least 1s, got %s", time.Duration(s.CommandTimeout))
	}
	return nil
}

func (s Session) checkToolLimits() *FieldError {
	if err := checkPerTool("session.tool_output_chars", s.ToolOutputChars, MaxToolOutputChars); err != nil {
		return err
	}
	return checkPerTool("session.tool_output_lines", s.ToolOutputLines, MaxToolOutputLines)
}

func checkPerTool(field string, m map[string]int, bound int) *FieldError {
	for _, name := range slices.Sorted(maps.Keys(m)) {
		n := m[name]
		switch {
		case !slices.Contains(KnownToolNames, name):
			return fieldErr(field, "names the unknown tool %q, want one of %s", name, strings.Join(KnownToolNames, ", "))
		case n < 1 || n > bound:
			return fieldErr(field+"."+name, "must be between 1 and %d, got %d", bound, n)
		}
	}
	return nil
}

func (s Session) checkLoop() *FieldError {
	switch {
	case s.LoopDetectionWindow < 0 || s.LoopDetectionWindow > MaxLoopDetectionWindow:
		return fieldErr("session.loop_detection_window", "must be between 2 and %d (0 = %d), got %d",
			MaxLoopDetectionWindow, DefaultLoopDetectionWindow, s.LoopDetectionWindow)
	case s.LoopDetectionWindow == 1:
		return fieldErr("session.loop_detection_window", "must be at least 2: one call cannot repeat a pattern")
	case s.LoopDetectionWindow > 0 && !s.LoopDetectionOn():
		return fieldErr("session.loop_detection_window", "is set but loop_detection is false; drop one of them")
	case s.NoProgressRounds < -1 || s.NoProgressRounds > MaxNoProgressRounds:
		return fieldErr("session.no_progress_rounds", "must be between 1 and %d (0 = 8, -1 = off), got %d",
			MaxNoProgressRounds, s.NoProgressRounds)
	case s.MaxOutputTokens < 0 || s.MaxOutputTokens > MaxOutputTokensBound:
		return fieldErr("session.max_output_tokens", "must be between 1 and %d (0 = the operator's default), got %d",
			MaxOutputTokensBound, s.MaxOutputTokens)
	}
	return nil
}

func (s Session) checkText() *FieldError {
	switch {
	case len(s.UserInstructions) > MaxUserInstructionsBytes:
		return fieldErr("session.user_instructions", "is %d bytes, more than %d; put long material in the repository (AGENTS.md)",
			len(s.UserInstructions), MaxUserInstructionsBytes)
	case !utf8.ValidString(s.UserInstructions):
		return fieldErr("session.user_instructions", "is not valid UTF-8")
	case s.EnvPolicy != "" && !slices.Contains(EnvPolicies, s.EnvPolicy):
		return fieldErr("session.env_policy", "%q is unknown, want one of %s", s.EnvPolicy, strings.Join(EnvPolicies, ", "))
	case len(s.Provider) > MaxNameBytes:
		return fieldErr("session.provider", "is longer than %d bytes", MaxNameBytes)
	}
	return nil
}

func (s Session) checkWebFetch() *FieldError {
	if s.WebFetch == nil {
		return nil
	}
	hosts := s.WebFetch.AllowedHosts
	switch {
	case len(hosts) > 0 && !s.WebFetch.Enabled:
		return fieldErr("session.web_fetch.allowed_hosts", "is set but web_fetch.enabled is false")
	case len(hosts) > MaxAllowedHosts:
		return fieldErr("session.web_fetch.allowed_hosts", "has %d hosts, at most %d", len(hosts), MaxAllowedHosts)
	}
	for i, h := range hosts {
		if h == "" || len(h) > 253 || strings.ContainsAny(h, " /:@*") {
			return fieldErr(fmt.Sprintf("session.web_fetch.allowed_hosts[%d]", i), "%q is not a host name such as docs.python.org", h)
		}
	}
	return nil
}

func (s Session) checkProviderOptions() *FieldError {
	o := s.ProviderOptions
	if o == nil {
		return nil
	}
	switch {
	case len(o.Headers) > MaxProviderHeaders:
		return fieldErr("session.provider_options.headers", "has %d headers, at most %d", len(o.Headers), MaxProviderHeaders)
	case len(o.AnthropicBeta) > MaxProviderHeaders:
		return fieldErr("session.provider_options.anthropic_beta", "has %d entries, at most %d", len(o.AnthropicBeta), MaxProviderHeaders)
	}
	for _, b := range o.AnthropicBeta {
		if b == "" || len(b) > MaxNameBytes || strings.ContainsAny(b, " ,\r\n") {
			return fieldErr("session.provider_options.anthropic_beta", "%q is not a beta name such as context-1m-2025-08-07", b)
		}
	}
	return checkHeaders(o.Headers)
}

func checkHeaders(h map[string]string) *FieldError {
	for _, k := range slices.Sorted(maps.Keys(h)) {
		field := "session.provider_options.headers." + k
		canon := http.CanonicalHeaderKey(k)
		switch {
		case !validHeaderName(k):
			return fieldErr("session.provider_options.headers", "%q is not an HTTP header name", k)
		case slices.Contains(refusedHeaders, canon) || strings.HasPrefix(canon, "X-Amz-"):
			return fieldErr(field, "may not be set by a spec: credentials and framing are the worker's")
		case len(h[k]) > MaxHeaderValueBytes || strings.ContainsAny(h[k], "\r\n\x00"):
			return fieldErr(field, "must be at most %d bytes on one line", MaxHeaderValueBytes)
		}
	}
	return nil
}

func validHeaderName(k string) bool {
	if k == "" || len(k) > MaxNameBytes {
		return false
	}
	for _, c := range k {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}
