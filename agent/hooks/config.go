package hooks

import (
	"errors"
	"fmt"
	"net/url"
	"path"
	"slices"
	"time"

	"github.com/agentfleet/agentfleet/agent"
	"github.com/agentfleet/agentfleet/internal/outbound"
)

// Action is what a hook does.
type Action string

const (
	// Shell runs a command in the session's environment with the event as
	// JSON on its standard input.
	Shell Action = "shell"
	// HTTP POSTs the event as JSON to a URL on the operator's allowlist.
	HTTP Action = "http"
)

// Defaults.
const (
	DefaultTimeout = 30 * time.Second
	MaxTimeout     = 10 * time.Minute
	// MaxAppend bounds what one post_tool_use hook adds to a result.
	MaxAppend = 8000
	// maxEventOutput bounds the tool output a hook is handed.
	maxEventOutput = 64 << 10
)

// Config is one hook. The mapstructure tags are the keys of the worker's
// configuration (hooks.hooks); a task spec's hooks convert to it.
type Config struct {
	// Event is the point the hook runs at: session_start, session_stop,
	// user_prompt_submit, pre_tool_use or post_tool_use.
	Event agent.HookPoint `mapstructure:"event"`
	// Tool filters pre_tool_use and post_tool_use hooks by tool name, a
	// glob ("edit_file", "mcp__github__*"); "" means every tool.
	Tool string `mapstructure:"tool"`
	// Type is shell or http; Command or URL goes with it.
	Type    Action `mapstructure:"type"`
	Command string `mapstructure:"command"`
	URL     string `mapstructure:"url"`
	// Timeout bounds one run (default 30 s, at most 10 min).
	Timeout time.Duration `mapstructure:"timeout"`
	// BlockOnFailure makes a pre_tool_use hook that fails, times out or
	// answers nonsense block the call; by default it does not, and a
	// WARNING event says so.
	BlockOnFailure bool `mapstructure:"block_on_failure"`
}

// WithDefaults returns c with its zero fields set.
func (c Config) WithDefaults() Config {
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	return c
}

// Validate reports the invalid fields, each prefixed with field (such as
// "hooks[0]"). allow is the operator's allowlist an http hook's URL must
// be on (see Allowlist); the zero value allows none.
func (c Config) Validate(field string, allow outbound.Allowlist) error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(field+"."+format, a...)) }
	if !slices.Contains(agent.HookPoints, c.Event) {
		bad("event %q is unknown, want one of %v", c.Event, agent.HookPoints)
	}
	if c.Tool != "" {
		if _, err := path.Match(c.Tool, ""); err != nil {
			bad("tool %q is not a valid glob: %v", c.Tool, err)
		}
	}
	switch c.Type {
	case Shell:
		if c.Command == "" || c.URL != "" {
			bad("command is required for a shell hook (and url is not used)")
		}
	case HTTP:
		u, err := url.Parse(c.URL)
		switch {
		case c.Command != "":
			bad("command is not used by an http hook; give url")
		case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
			bad("url must be an http or https URL, got %q", c.URL)
		case allow.Check(u) != nil:
			bad("url %q is not on the worker's hook allowlist (hooks_http_allowlist): %v; ask the operator to add it", c.URL, allow.Check(u))
		}
	default:
		bad("type %q is unknown, want shell or http", c.Type)
	}
	if c.Timeout < 0 || c.Timeout > MaxTimeout {
		bad("timeout must be between 0 (default %s) and %s, got %s", DefaultTimeout, MaxTimeout, c.Timeout)
	}
	return errors.Join(errs...)
}

// matches reports whether the hook runs for ev.
func (c Config) matches(ev agent.HookEvent) bool {
	if c.Event != ev.Point {
		return false
	}
	if c.Tool == "" || (ev.Point != agent.HookPreToolUse && ev.Point != agent.HookPostToolUse) {
		return true
	}
	ok, _ := path.Match(c.Tool, ev.ToolName)
	return ok
}

// describe names the hook in warnings.
func (c Config) describe() string {
	what := c.Command
	if c.Type == HTTP {
		what = c.URL
	}
	if len(what) > 80 {
		what = what[:80] + "..."
	}
	return fmt.Sprintf("%s hook %s (%q)", c.Event, c.Type, what)
}

// Allowlist parses the operator's hooks_http_allowlist (the entry forms
// of outbound.ParseAllowlist: scheme, host, port and an optional path,
// compared as parsed parts, never as text prefixes).
func Allowlist(entries []string) (outbound.Allowlist, error) {
	return outbound.ParseAllowlist("hooks_http_allowlist", entries)
}
