package fleet

import (
	"fmt"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Extensions are what a task adds to its session beyond the built-in
// tools: MCP servers and lifecycle hooks. They sit at the top level of a
// spec (mcp_servers, hooks). A worker's configuration bounds them: HTTP
// servers and http hooks must be on its allowlists, and a worker may refuse
// task servers altogether; a spec that asks for more fails on the worker
// with the reason not_allowed.
type Extensions struct {
	MCPServers []MCPServer `json:"mcp_servers,omitempty"`
	Hooks      []Hook      `json:"hooks,omitempty"`
}

// MCPServer is an MCP server a task's session connects to: a stdio
// command run inside the task's environment (Command, Args, Env), or an
// HTTP URL (URL, Headers) speaking streamable HTTP or, found by a fallback
// or pinned by Transport, the older HTTP+SSE transport. Values of Env and Headers that are
// secrets must be references, "${secret:NAME}", which the worker resolves
// from its own configuration (mcp_secrets); an Authorization, Cookie or
// API-key header refuses anything else.
type MCPServer struct {
	Name    string            `json:"name"`
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	// Transport of an HTTP server: "streamable-http", "sse" or "auto"
	// (the default, also ""): streamable HTTP, falling back to HTTP+SSE
	// when the server refuses it with 400, 404 or 405.
	Transport string `json:"transport,omitempty"`
	// Required fails the task when the server cannot be started; without
	// it the session runs without the server's tools and a WARNING event
	// says why.
	Required     bool     `json:"required,omitempty"`
	StartTimeout Duration `json:"start_timeout,omitempty"` // default 60s
	CallTimeout  Duration `json:"call_timeout,omitempty"`  // default 2m
	// MaxOutputChars bounds what the model sees of one result (default 30000).
	MaxOutputChars int `json:"max_output_chars,omitempty"`
}

// Hook is a lifecycle hook of a task's session (see package agent/hooks):
// Event is session_start, session_stop, user_prompt_submit, pre_tool_use or
// post_tool_use; Tool a glob over tool names; Type shell (Command) or http
// (URL).
type Hook struct {
	Event          string   `json:"event"`
	Tool           string   `json:"tool,omitempty"`
	Type           string   `json:"type"`
	Command        string   `json:"command,omitempty"`
	URL            string   `json:"url,omitempty"`
	Timeout        Duration `json:"timeout,omitempty"` // default 30s, at most 10m
	BlockOnFailure bool     `json:"block_on_failure,omitempty"`
}

// Bounds of Extensions.
const (
	MaxMCPServers = 16
	MaxHooks      = 32
)

// HookEvents are the events a hook may name.
var HookEvents = []string{"session_start", "session_stop", "user_prompt_submit", "pre_tool_use", "post_tool_use"}

// MCPTransports are the values MCPServer.Transport may take besides "".
var MCPTransports = []string{"auto", "streamable-http", "sse"}

var mcpNamePattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,32}$`)

// secretHeaders must carry only secret references.
var secretHeaders = []string{"authorization", "proxy-authorization", "cookie", "x-api-key", "api-key"}

var secretRefPattern = regexp.MustCompile(`\$\{secret:[A-Za-z0-9_.-]+\}`)

// check validates the extensions; called from TaskSpec.Validate.
func (x Extensions) check() *FieldError {
	if len(x.MCPServers) > MaxMCPServers {
		return fieldErr("mcp_servers", "has %d servers, more than %d", len(x.MCPServers), MaxMCPServers)
	}
	seen := map[string]bool{}
	for i, s := range x.MCPServers {
		if err := s.check(fmt.Sprintf("mcp_servers[%d]", i)); err != nil {
			return err
		}
		if seen[s.Name] {
			return fieldErr(fmt.Sprintf("mcp_servers[%d].name", i), "%q names two servers; give each its own name", s.Name)
		}
		seen[s.Name] = true
	}
	if len(x.Hooks) > MaxHooks {
		return fieldErr("hooks", "has %d hooks, more than %d", len(x.Hooks), MaxHooks)
	}
	for i, h := range x.Hooks {
		if err := h.check(fmt.Sprintf("hooks[%d]", i)); err != nil {
			return err
		}
	}
	return nil
}

func (s MCPServer) check(f string) *FieldError {
	switch {
	case !mcpNamePattern.MatchString(s.Name) || strings.Contains(s.Name, "__"):
		return fieldErr(f+".name", "%q must be 1 to 32 letters, digits, '-' or '_' without \"__\" (tools are named mcp__<name>__<tool>)", s.Name)
	case s.Command == "" && s.URL == "":
		return fieldErr(f+".command", "or url is required: a stdio command run in the task's environment, or a streamable-HTTP URL")
	case s.Command != "" && s.URL != "":
		return fieldErr(f+".url", "and command are exclusive: give one")
	case len(s.Args) > 0 && s.Command == "":
		return fieldErr(f+".args", "needs a command")
	case len(s.Headers) > 0 && s.URL == "":
		return fieldErr(f+".headers", "need a url")
	case s.Transport != "" && !slices.Contains(MCPTransports, s.Transport):
		return fieldErr(f+".transport", "%q is unknown, want one of %s (or leave it out for auto)", s.Transport, strings.Join(MCPTransports, ", "))
	case s.Transport != "" && s.URL == "":
		return fieldErr(f+".transport", "needs a url (a stdio server has no transport to choose)")
	case s.StartTimeout < 0 || s.CallTimeout < 0 || s.MaxOutputChars < 0:
		return fieldErr(f+".call_timeout", "start_timeout, call_timeout and max_output_chars must be >= 0")
	}
	if s.URL != "" && !isHTTPURL(s.URL) {
		return fieldErr(f+".url", "must be an http or https URL, got %q", s.URL)
	}
	for k, v := range s.Headers {
		if slices.Contains(secretHeaders, strings.ToLower(k)) && strings.TrimSpace(secretRefPattern.ReplaceAllString(strings.TrimPrefix(v, "Bearer "), "")) != "" {
			return fieldErr(f+".headers."+k, "must be a secret reference such as \"Bearer ${secret:NAME}\"; specs never carry secrets (the worker resolves NAME from mcp_secrets)")
		}
	}
	return nil
}

func (h Hook) check(f string) *FieldError {
	switch {
	case !slices.Contains(HookEvents, h.Event):
		return fieldErr(f+".event", "%q is unknown, want one of %s", h.Event, strings.Join(HookEvents, ", "))
	case h.Type != "shell" && h.Type != "http":
		return fieldErr(f+".type", "%q is unknown, want shell or http", h.Type)
	case h.Type == "shell" && (h.Command == "" || h.URL != ""):
		return fieldErr(f+".command", "is required for a shell hook (url is for http hooks)")
	case h.Type == "http" && (h.URL == "" || h.Command != ""):
		return fieldErr(f+".url", "is required for an http hook (command is for shell hooks)")
	case h.Type == "http" && !isHTTPURL(h.URL):
		return fieldErr(f+".url", "must be an http or https URL, got %q", h.URL)
	case h.Timeout < 0 || time.Duration(h.Timeout) > 10*time.Minute:
		return fieldErr(f+".timeout", "must be between 0 (default 30s) and 10m, got %s", time.Duration(h.Timeout))
	}
	if _, err := path.Match(h.Tool, ""); err != nil {
		return fieldErr(f+".tool", "%q is not a valid glob: %v", h.Tool, err)
	}
	return nil
}

func isHTTPURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}
