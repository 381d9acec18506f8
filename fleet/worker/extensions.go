package worker

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/agentfleet/agentfleet/agent"
	"github.com/agentfleet/agentfleet/agent/hooks"
	"github.com/agentfleet/agentfleet/tools/mcp"
	"github.com/agentfleet/agentfleet/tools/skills"
)

// extensions are a run's MCP servers, hooks and skills: started by
// startExtensions before the session is built, registered in its tool
// registry after, closed with the environment.
type extensions struct {
	mcp      *mcp.Client
	hooks    []agent.Hook
	skills   *skills.Set
	warnings []string // said at session_start as WARNING events
}

// startExtensions starts the operator's and the task's MCP servers in the
// task's environment and builds the hooks. A server that fails becomes a
// warning, or fails the run when it is required (errBadEnvironment); a
// spec beyond the operator's bounds is errNotAllowed.
func (r *run) startExtensions(ctx context.Context) (*extensions, error) {
	cfg := r.w.cfg.ExtensionsConfig
	taskServers, err := cfg.taskServers(r.spec.MCPServers)
	if err != nil {
		return nil, err
	}
	taskHooks, err := cfg.taskHooks(r.spec.Hooks)
	if err != nil {
		return nil, err
	}
	x := &extensions{}
	if servers := slices.Concat(cfg.operatorServers(), taskServers); len(servers) > 0 {
		var failed []*mcp.StartError
		x.mcp, failed = mcp.Start(ctx, servers, mcp.Options{Env: r.env, Secrets: cfg.secrets(), Logger: r.log})
		if err := ctx.Err(); err != nil {
			_ = x.mcp.Close() // the worker stops: hand the task back rather than fail it
			return nil, err
		}
		for _, f := range failed {
			if f.Required {
				_ = x.mcp.Close()
				return nil, fmt.Errorf("%w: %v (the server is required)", errBadEnvironment, f)
			}
			x.warnings = append(x.warnings, f.Error()+"; the session runs without its tools")
		}
	}
	if err := x.findSkills(ctx, r, cfg.SkillDirs); err != nil {
		_ = x.close()
		return nil, err
	}
	if all := slices.Concat(cfg.Hooks, taskHooks); len(all) > 0 {
		x.hooks = append(x.hooks, hooks.New(all, hooks.Options{Env: r.env, AllowURL: hooks.Allowlist(cfg.HooksHTTPAllowlist)}))
	}
	return x, nil
}

// findSkills discovers the repository's and the operator's skills; a
// skipped SKILL.md becomes a warning.
func (x *extensions) findSkills(ctx context.Context, r *run, dirs []string) error {
	env := r.env
	if r.ws != nil && r.ws.lazy {
		env = nil // a fresh workspace holds no skills, and listing it would create it
	}
	set, problems, err := skills.Discover(ctx, env, dirs)
	if err != nil {
		return err
	}
	for _, p := range problems {
		x.warnings = append(x.warnings, p.Error())
	}
	if len(set.Skills()) > 0 {
		x.skills = set
	}
	return nil
}

// configure adds the hooks and the skills' prompt section to a session's
// configuration.
func (x *extensions) configure(cfg *agent.Config) {
	cfg.Hooks = x.sessionHooks()
	if x != nil && x.skills != nil {
		cfg.Session.UserInstructions = strings.TrimSpace(cfg.Session.UserInstructions + "\n\n" + x.skills.Prompt())
	}
}

// sessionHooks returns the hooks of the session: first the one that says
// the start-up warnings at session_start, then the configured ones.
func (x *extensions) sessionHooks() []agent.Hook {
	if x == nil || len(x.warnings)+len(x.hooks) == 0 {
		return nil
	}
	out := []agent.Hook{agent.HookFunc(func(_ context.Context, ev agent.HookEvent) agent.HookResult {
		if ev.Point != agent.HookSessionStart {
			return agent.HookResult{}
		}
		return agent.HookResult{Warnings: x.warnings}
	})}
	return append(out, x.hooks...)
}

// register offers the MCP tools and the skill tool in the session's
// registry.
func (x *extensions) register(sess *agent.Session) {
	if x == nil {
		return
	}
	if x.mcp != nil {
		x.mcp.Register(sess.Registry())
	}
	if x.skills != nil {
		sess.Registry().Register(x.skills.Tool())
	}
}

// close ends the MCP servers; safe on nil.
func (x *extensions) close() error {
	if x == nil || x.mcp == nil {
		return nil
	}
	return errors.Join(x.mcp.Close())
}
