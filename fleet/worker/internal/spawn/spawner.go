package spawn

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/agent"
	"github.com/agentfleet/agentfleet/execenv"
	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/internal/gitstore"
	"github.com/agentfleet/agentfleet/fleet/internal/taskops"
	"github.com/agentfleet/agentfleet/internal/beneath"
	"github.com/agentfleet/agentfleet/internal/tracing"
	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/store"
)

// Fleet is what the spawner uses of the worker it runs on.
type Fleet struct {
	Store     store.Store
	Queue     *queue.Client
	Completer *taskops.Completer // closing a child cancels its subtree through it
	WorkerID  string             // this worker: children that share a local workspace run here
	Spawned   func()             // called for each child task enqueued (a metric); may be nil
	// Git is the fleet git store (travel.go); nil: children of a local
	// workspace run here, in worktrees.
	Git *gitstore.Client
}

// Parent is the task whose session spawns.
type Parent struct {
	Task       store.Task
	Spec       fleet.TaskSpec // as decoded (fleet.DecodeSpec), defaults filled; children inherit it
	WorkingDir string         // the parent's environment's working directory
	// MaxLiveChildren is the cap on the parent's unfinished children in
	// effect (fleet.TaskSpec.LiveChildrenLimit: the spec's, else the
	// worker's default). It is not written into the children's specs.
	MaxLiveChildren int
	// Session gives the parent session's current model and reasoning
	// effort, ok false before the session exists. Nil means it never does.
	Session func() (model, effort string, ok bool)
	Log     *slog.Logger
	// Env is the parent's environment, where the git of its children's
	// worktrees runs (worktree.go); nil: every child shares its tree.
	Env execenv.Environment
}

// Spawner is the fleet's agent.Spawner for one run of a parent task.
type Spawner struct {
	f       Fleet
	p       Parent
	created atomic.Int64 // child task creations attempted in this run

	mu    sync.Mutex  // guards waits
	waits []uuid.UUID // children whose wait parked the session in this run

	gitMu sync.Mutex // one worktree made or merged at a time
}

var _ agent.Spawner = (*Spawner)(nil)

// New returns the spawner of one run of the parent.
func New(f Fleet, p Parent) *Spawner { return &Spawner{f: f, p: p} }

// Created is how many child task creations this run attempted. A create
// whose answer was lost may have committed, so it counts as well.
func (s *Spawner) Created() int64 { return s.created.Load() }

// Awaited returns the children the parked session waits for.
func (s *Spawner) Awaited() []uuid.UUID {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]uuid.UUID(nil), s.waits...)
}

// Spawn creates the child task (idempotent per spawn_agent call id, so a
// resumed parent re-running the call gets the same child) and enqueues it.
func (s *Spawner) Spawn(ctx context.Context, req agent.SpawnRequest) (agent.SubagentStatus, error) {
	if err := s.checkRunning(ctx); err != nil {
		return agent.SubagentStatus{}, err
	}
	if err := s.checkLive(ctx, "spawn"); err != nil {
		return agent.SubagentStatus{}, err
	}
	dir, base, err := s.placeChild(ctx, req) // travel.go
	if err != nil {
		return agent.SubagentStatus{}, err
	}
	spec, err := s.childSpec(req, dir, base)
	spec.TraceParent = tracing.TraceParent(ctx) // the spawn_agent call's span
	if err != nil {
		if base == "" && dir != s.p.WorkingDir {
			s.dropWorktree(ctx, s.worktreeKey(req.CallID))
		}
		return agent.SubagentStatus{}, err
	}
	body, err := json.Marshal(spec)
	if err != nil {
		return agent.SubagentStatus{}, err
	}
	t := s.p.Task
	s.created.Add(1) // before: a create whose answer is lost may have committed
	res, err := s.f.Store.CreateTask(ctx, store.CreateTaskParams{ParentID: t.ID, Queue: spec.Queue,
		Priority: spec.Priority, Spec: body, IdempotencyKey: "spawn:" + t.ID.String() + ":" + req.CallID,
		Labels: t.Labels})
	if err != nil {
		return agent.SubagentStatus{}, fmt.Errorf("creating the subagent task: %w", err)
	}
	child := res.Task
	if child.State == store.TaskQueued {
		o := taskops.ChildStartMessage(child, spec, s.f.WorkerID)
		if _, err := s.f.Queue.Send(ctx, o.To, o.Msg, o.MsgID); err != nil {
			return agent.SubagentStatus{}, fmt.Errorf("enqueueing the subagent task: %w", err)
		}
		if s.f.Spawned != nil {
			s.f.Spawned()
		}
	}
	return agent.SubagentStatus{AgentID: child.ID.String(), Status: subagentStatus(child.State)}, nil
}

// checkRunning refuses a spawn when the store no longer has the parent
// running here (cancelled, typically, before its abort arrived). It is a
// cheap early answer for the model; what makes the rule strict is the
// store, which never starts a child of a cancelled parent.
func (s *Spawner) checkRunning(ctx context.Context) error {
	t, err := s.f.Store.GetTask(ctx, store.GetTaskParams{ID: s.p.Task.ID})
	if err != nil {
		return fmt.Errorf("cannot spawn: reading this task's state: %w", err)
	}
	if t.State != store.TaskRunning || t.WorkerID != s.f.WorkerID {
		return fmt.Errorf("cannot spawn: this task is %s and no longer running, so it may not start subagents; stop and report what you have", t.State)
	}
	return nil
}

// checkLive refuses a spawn beyond the parent's cap on unfinished children.
func (s *Spawner) checkLive(ctx context.Context, doing string) error {
	kids, err := s.f.Store.Children(ctx, store.ChildrenParams{ParentID: s.p.Task.ID})
	if err != nil {
		return err
	}
	live := 0
	for _, c := range kids.Children {
		if !c.State.Terminal() {
			live++
		}
	}
	if max := s.p.MaxLiveChildren; live >= max {
		return fmt.Errorf("cannot %s: %d subagents are still running and the limit is %d; wait for or close one first", doing, live, max)
	}
	return nil
}

// childSpec derives the child's spec: the parent's profile, effort, tree
// limits, queue and environment, working in dir (the parent's working
// directory or the child's worktree; a subdirectory of it with working_dir),
// the requested or the parent's current model, its own turn limit, and the
// parent's limits for the rest (wall time, tokens, cost: each child is
// bounded as its parent is). It fills no default of its own: the parent's
// spec has them (fleet.Defaults), and max_live_children stays the
// parent's spec's, not the cap in effect for the parent.
func (s *Spawner) childSpec(req agent.SpawnRequest, dir, base string) (fleet.TaskSpec, error) {
	p, t := s.p.Spec, s.p.Task
	env := p.Environment
	local := env.Kind == fleet.EnvLocal
	switch {
	case base != "": // a fresh workspace wherever it runs, from the store's base
		env = fleet.Environment{Kind: fleet.EnvLocal, Repo: p.Environment.Repo, Ref: p.Environment.Ref,
			Image: p.Environment.Image, ImageCredentials: p.Environment.ImageCredentials,
			Children: p.Environment.Children, StoreBase: base}
	case local:
		env = fleet.Environment{Kind: fleet.EnvLocal, WorkingDir: dir, Shared: p.Environment.Shared,
			Image: p.Environment.Image, ImageCredentials: p.Environment.ImageCredentials, // the parent's system too
			Children: p.Environment.Children}
	default:
		env.WorkingDir = dir
	}
	if req.WorkingDir != "" && base == "" {
		dir, err := subdir(env.WorkingDir, req.WorkingDir, local)
		if err != nil {
			return fleet.TaskSpec{}, err
		}
		env.WorkingDir = dir
	}
	model, effort := req.Model, p.ReasoningEffort
	if s.p.Session != nil {
		if m, e, ok := s.p.Session(); ok {
			effort = e
			if model == "" {
				model = m
			}
		}
	}
	spec := fleet.TaskSpec{
		Prompt: req.Task, Profile: p.Profile, Model: model, ReasoningEffort: effort,
		Limits:      fleet.Limits{MaxTurns: req.MaxTurns}.Within(p.Limits),
		Environment: env, Session: p.Session, Sandbox: p.Sandbox, // a shared workspace shares its sandbox
		ParentID: t.ID, RootID: t.RootID, Depth: t.Depth + 1,
		MaxSubagentDepth: p.MaxSubagentDepth, MaxLiveChildren: p.MaxLiveChildren, ChildPolicy: p.ChildPolicy,
		Tenant: p.Tenant, Queue: p.Queue, Priority: min(p.Priority+1, fleet.MaxPriority),
		Permissions: p.Permissions,
		Extensions:  p.Extensions, // a child cannot shed its parent's hooks
	}
	if req.ReadOnly {
		spec.Permissions = readOnlyPermissions(p.Permissions)
	}
	return spec, nil
}

// subdir resolves a subagent's working_dir beneath the parent's working
// directory parent. A local one is created and opened there with
// internal/beneath, so an absolute path, a ".." component or a link in
// any component (the parent's `ln -s / esc`, then working_dir "esc") is
// refused before the child exists; the child's worker resolves it again
// when it builds the child's workspace. A remote (SSH) one is checked as
// text: the links on that host are its owner's.
func subdir(parent, req string, local bool) (string, error) {
	if !local {
		sub := path.Clean(req)
		if path.IsAbs(sub) || sub == ".." || strings.HasPrefix(sub, "../") {
			return "", fmt.Errorf("working_dir %q must be a subdirectory of the working directory", req)
		}
		return path.Join(parent, sub), nil
	}
	f, err := beneath.MkdirAll(parent, req, 0o755)
	if err != nil {
		return "", fmt.Errorf("working_dir %q is refused: %w; name a real subdirectory of the working directory (relative, no links, no \"..\")", req, err)
	}
	_ = f.Close()
	return filepath.Join(parent, filepath.Clean(req)), nil
}

// child returns the task behind an agent id, checking it is a child of
// this parent.
func (s *Spawner) child(ctx context.Context, agentID string) (store.Task, error) {
	id, err := uuid.Parse(agentID)
	if err != nil {
		return store.Task{}, fmt.Errorf("no subagent with id %q; use the agent_id that spawn_agent returned", agentID)
	}
	t, err := s.f.Store.GetTask(ctx, store.GetTaskParams{ID: id})
	if errors.Is(err, store.ErrNotFound) || err == nil && t.ParentID != s.p.Task.ID {
		return store.Task{}, fmt.Errorf("no subagent with id %q among yours; use the agent_id that spawn_agent returned", agentID)
	}
	return t, err
}

// Close cancels the child and its whole subtree.
func (s *Spawner) Close(ctx context.Context, agentID string) (agent.SubagentStatus, error) {
	t, err := s.child(ctx, agentID)
	if err != nil {
		return agent.SubagentStatus{}, err
	}
	if !t.State.Terminal() {
		res, err := s.f.Completer.CancelTree(ctx, t.ID, "closed by its parent")
		if err != nil {
			return agent.SubagentStatus{}, err
		}
		if res.AbortErr != nil {
			s.p.Log.Warn("closing a subagent: its session learns of the cancel at its next write", "agent_id", agentID, "err", res.AbortErr)
		}
	}
	return agent.SubagentStatus{AgentID: agentID, Status: agent.SubagentClosed}, nil
}

// CloseAll does nothing: a session closes when it parks or its run ends,
// and children must outlive a parked parent. Children of an ended task are
// cancelled by the worker according to the spec's ChildPolicy.
func (s *Spawner) CloseAll(context.Context) {}
