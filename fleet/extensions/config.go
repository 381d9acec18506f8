package extensions

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/agentfleet/agentfleet/agent"
	"github.com/agentfleet/agentfleet/agent/hooks"
	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/internal/outbound"
	"github.com/agentfleet/agentfleet/tools/mcp"
)

// Config is the operator's side of MCP servers, hooks and skills. The
// worker's configuration squashes it, so its keys sit at the top level.
// It is an upper bound: a task's spec adds servers and hooks only within
// it.
type Config struct {
	// MCPServers every session on this worker connects to.
	MCPServers []mcp.ServerConfig `mapstructure:"mcp_servers"`
	// MCPSecrets are the values secret references ("${secret:NAME}") in
	// servers' env and headers resolve to; a value "env:VAR" reads the
	// worker's environment variable VAR at each start.
	MCPSecrets map[string]string `mapstructure:"mcp_secrets"`
	// MCPHTTPAllowlist lists the URLs a task's HTTP MCP servers may use
	// (entries as internal/outbound.ParseAllowlist reads them: scheme,
	// host, port and an optional path, compared as parsed parts); every
	// server's redirects may lead to them too. Empty allows no task HTTP
	// server.
	MCPHTTPAllowlist []string `mapstructure:"mcp_http_allowlist"`
	// NoTaskMCPServers refuses every MCP server a task spec names.
	NoTaskMCPServers bool `mapstructure:"no_task_mcp_servers"`

	// Hooks run in every session, before a task's own.
	Hooks []hooks.Config `mapstructure:"hooks"`
	// HooksHTTPAllowlist lists the URLs http hooks may post to (the
	// operator's and tasks'), in the same form as MCPHTTPAllowlist; empty
	// allows none.
	HooksHTTPAllowlist []string `mapstructure:"hooks_http_allowlist"`
	// NoTaskHooks refuses every hook a task spec names.
	NoTaskHooks bool `mapstructure:"no_task_hooks"`

	// SkillDirs are directories of skills (<dir>/<skill>/SKILL.md) on the
	// worker, offered to every session besides the repository's own.
	SkillDirs []string `mapstructure:"skill_dirs"`
}

// Validate reports every invalid field, naming its key.
func (c Config) Validate() []error {
	var errs []error
	names := map[string]bool{}
	for i, s := range c.MCPServers {
		if err := s.Validate(fmt.Sprintf("mcp_servers[%d]", i)); err != nil {
			errs = append(errs, err)
		}
		if names[s.Name] {
			errs = append(errs, fmt.Errorf("mcp_servers[%d].name %q names two servers", i, s.Name))
		}
		names[s.Name] = true
	}
	if _, err := mcpAllowlist(c.MCPHTTPAllowlist); err != nil {
		errs = append(errs, err)
	}
	allow, err := hooks.Allowlist(c.HooksHTTPAllowlist)
	if err != nil {
		errs = append(errs, err)
	}
	for i, h := range c.Hooks {
		if err := h.Validate(fmt.Sprintf("hooks[%d]", i), allow); err != nil {
			errs = append(errs, err)
		}
	}
	for i, d := range c.SkillDirs {
		if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
			errs = append(errs, fmt.Errorf("skill_dirs[%d] %q is not a readable directory: %v", i, d, err))
		}
	}
	return errs
}

// secrets resolves MCPSecrets' values ("env:VAR" read now). Names match
// case-insensitively: the configuration reader folds map keys to lower
// case.
func (c Config) secrets() mcp.Secrets {
	vals := make(map[string]string, len(c.MCPSecrets))
	for k, v := range c.MCPSecrets {
		if name, ok := strings.CutPrefix(v, "env:"); ok {
			v = os.Getenv(name)
		}
		vals[strings.ToLower(k)] = v
	}
	return mcp.Secrets{Values: vals}
}

// operatorServers are MCPServers with their env names in upper case: the
// configuration reader folds map keys to lower case, and environment
// variables of servers are upper case by convention (GITHUB_TOKEN).
func (c Config) operatorServers() []mcp.ServerConfig {
	out := make([]mcp.ServerConfig, len(c.MCPServers))
	for i, s := range c.MCPServers {
		if len(s.Env) > 0 {
			env := make(map[string]string, len(s.Env))
			for k, v := range s.Env {
				env[strings.ToUpper(k)] = v
			}
			s.Env = env
		}
		out[i] = s
	}
	return out
}

// ErrNotAllowed marks a spec beyond the operator's bounds (a permanent
// failure of the task).
var ErrNotAllowed = errors.New("not allowed on this worker")

// taskServers converts and checks a spec's MCP servers against the
// operator's bounds; an error wraps ErrNotAllowed.
func (c Config) taskServers(spec []fleet.MCPServer) ([]mcp.ServerConfig, error) {
	if len(spec) == 0 {
		return nil, nil
	}
	if c.NoTaskMCPServers {
		return nil, fmt.Errorf("%w: the task names MCP servers and this worker takes none from tasks (no_task_mcp_servers)", ErrNotAllowed)
	}
	allow, err := mcpAllowlist(c.MCPHTTPAllowlist)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotAllowed, err)
	}
	out := make([]mcp.ServerConfig, 0, len(spec))
	for i, s := range spec {
		if s.URL != "" && !allow.Admits(s.URL) {
			return nil, fmt.Errorf("%w: spec.mcp_servers[%d].url %q is not on this worker's mcp_http_allowlist", ErrNotAllowed, i, s.URL)
		}
		for _, op := range c.MCPServers {
			if op.Name == s.Name {
				return nil, fmt.Errorf("%w: spec.mcp_servers[%d].name %q is the name of a server the worker configures; choose another", ErrNotAllowed, i, s.Name)
			}
		}
		out = append(out, mcp.ServerConfig{Name: s.Name, Command: s.Command, Args: s.Args, Env: s.Env, URL: s.URL,
			Headers: s.Headers, Transport: s.Transport, Required: s.Required, StartTimeout: time.Duration(s.StartTimeout),
			CallTimeout: time.Duration(s.CallTimeout), MaxOutputChars: s.MaxOutputChars})
	}
	return out, nil
}

// taskHooks converts and checks a spec's hooks; an error wraps
// ErrNotAllowed.
func (c Config) taskHooks(spec []fleet.Hook) ([]hooks.Config, error) {
	if len(spec) == 0 {
		return nil, nil
	}
	if c.NoTaskHooks {
		return nil, fmt.Errorf("%w: the task names hooks and this worker takes none from tasks (no_task_hooks)", ErrNotAllowed)
	}
	allow, err := hooks.Allowlist(c.HooksHTTPAllowlist)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotAllowed, err)
	}
	out := make([]hooks.Config, 0, len(spec))
	var errs []error
	for i, h := range spec {
		hc := hooks.Config{Event: agent.HookPoint(h.Event), Tool: h.Tool, Type: hooks.Action(h.Type), Command: h.Command,
			URL: h.URL, Timeout: time.Duration(h.Timeout), BlockOnFailure: h.BlockOnFailure}
		if err := hc.Validate(fmt.Sprintf("spec.hooks[%d]", i), allow); err != nil {
			errs = append(errs, err)
		}
		out = append(out, hc)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotAllowed, err)
	}
	return out, nil
}

// mcpAllowlist parses mcp_http_allowlist.
func mcpAllowlist(entries []string) (outbound.Allowlist, error) {
	return outbound.ParseAllowlist("mcp_http_allowlist", entries)
}
