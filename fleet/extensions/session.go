package extensions

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"slices"
	"strings"

	"github.com/agentfleet/agentfleet/agent"
	"github.com/agentfleet/agentfleet/agent/hooks"
	"github.com/agentfleet/agentfleet/execenv"
	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/tools/mcp"
	"github.com/agentfleet/agentfleet/tools/skills"
)

// ErrRequired marks a required MCP server that did not start: the task's
// environment cannot be built.
var ErrRequired = errors.New("a required MCP server did not start")

// Session is a session's MCP servers, hooks and skills: started by Start
// before the session is built, registered in its tool registry after
// (Register), closed with the environment. Methods are safe on nil.
type Session struct {
	mcp      *mcp.Client
	hooks    []agent.Hook
	skills   *skills.Set
	warnings []string // said at session_start as WARNING events
}

// Task is what Start needs of the task: its extensions, its environment,
// and whether that environment may hold skills (false for a fresh
// workspace not created yet, which listing would create).
type Task struct {
	Spec       fleet.Extensions
	Env        execenv.Environment
	RepoSkills bool
	Logger     *slog.Logger
	// AllowPrivate are the internal addresses HTTP MCP servers and http
	// hooks may reach: the worker's outbound_allow_private, never a spec's.
	AllowPrivate []netip.Prefix
}

// Start starts the operator's and the task's MCP servers in the task's
// environment, finds the skills and builds the hooks. A server that fails
// becomes a warning, or fails the start when it is required (ErrRequired);
// a spec beyond the operator's bounds is ErrNotAllowed; a ctx that ends is
// its error (the worker stops: the task goes back to the queue).
func Start(ctx context.Context, cfg Config, t Task) (*Session, error) {
	taskServers, err := cfg.taskServers(t.Spec.MCPServers)
	if err != nil {
		return nil, err
	}
	taskHooks, err := cfg.taskHooks(t.Spec.Hooks)
	if err != nil {
		return nil, err
	}
	x := &Session{}
	if servers := slices.Concat(cfg.operatorServers(), taskServers); len(servers) > 0 {
		var failed []*mcp.StartError
		x.mcp, failed = mcp.Start(ctx, servers, mcp.Options{Env: t.Env, Secrets: cfg.secrets(), Logger: t.Logger,
			HTTPAllow: cfg.MCPHTTPAllowlist, AllowPrivate: t.AllowPrivate})
		if err := ctx.Err(); err != nil {
			_ = x.mcp.Close() // the worker stops: hand the task back rather than fail it
			return nil, err
		}
		for _, f := range failed {
			if f.Required {
				_ = x.mcp.Close()
				return nil, fmt.Errorf("%w: %v (the server is required)", ErrRequired, f)
			}
			x.warnings = append(x.warnings, f.Error()+"; the session runs without its tools")
		}
	}
	if err := x.findSkills(ctx, t, cfg.SkillDirs); err != nil {
		_ = x.Close()
		return nil, err
	}
	if all := slices.Concat(cfg.Hooks, taskHooks); len(all) > 0 {
		allow, err := hooks.Allowlist(cfg.HooksHTTPAllowlist)
		if err != nil {
			_ = x.Close()
			return nil, fmt.Errorf("%w: %v", ErrNotAllowed, err)
		}
		x.hooks = append(x.hooks, hooks.New(all, hooks.Options{Env: t.Env, Allow: allow, AllowPrivate: t.AllowPrivate}))
	}
	return x, nil
}

// findSkills discovers the repository's and the operator's skills; a
// skipped SKILL.md becomes a warning.
func (x *Session) findSkills(ctx context.Context, t Task, dirs []string) error {
	env := t.Env
	if !t.RepoSkills {
		env = nil
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

// Configure adds the hooks and the skills' prompt section to a session's
// configuration.
func (x *Session) Configure(cfg *agent.Config) {
	cfg.Hooks = x.sessionHooks()
	if x != nil && x.skills != nil {
		cfg.Session.UserInstructions = strings.TrimSpace(cfg.Session.UserInstructions + "\n\n" + x.skills.Prompt())
	}
}

// sessionHooks returns the hooks of the session: first the one that says
// the start-up warnings at session_start, then the configured ones.
func (x *Session) sessionHooks() []agent.Hook {
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

// Register offers the MCP tools and the skill tool in the session's
// registry.
func (x *Session) Register(sess *agent.Session) {
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

// Close ends the MCP servers; safe on nil.
func (x *Session) Close() error {
	if x == nil || x.mcp == nil {
		return nil
	}
	return errors.Join(x.mcp.Close())
}
