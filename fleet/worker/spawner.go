package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/agent"
	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/internal/taskops"
	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/store"
)

// spawner is the fleet's agent.Spawner: every subagent is a child task that
// any worker may run (or this worker, for a local workspace). Its agent ids
// are the child task ids. It is built per run; what it knows lives in the
// store, so a resumed parent gets a fresh one.
type spawner struct {
	r       *run
	created atomic.Int64 // child task creations attempted in this run

	mu    sync.Mutex  // guards waits
	waits []uuid.UUID // children whose wait parked the session in this run
}

var _ agent.Spawner = (*spawner)(nil)

func newSpawner(r *run) *spawner { return &spawner{r: r} }

// awaited returns the children the parked session waits for.
func (s *spawner) awaited() []uuid.UUID {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]uuid.UUID(nil), s.waits...)
}

// Spawn creates the child task (idempotent per spawn_agent call id, so a
// resumed parent re-running the call gets the same child) and enqueues it.
func (s *spawner) Spawn(ctx context.Context, req agent.SpawnRequest) (agent.SubagentStatus, error) {
	r, w := s.r, s.r.w
	if err := s.checkRunning(ctx); err != nil {
		return agent.SubagentStatus{}, err
	}
	if err := s.checkLive(ctx, "spawn"); err != nil {
		return agent.SubagentStatus{}, err
	}
	spec, err := s.childSpec(req)
	if err != nil {
		return agent.SubagentStatus{}, err
	}
	body, err := json.Marshal(spec)
	if err != nil {
		return agent.SubagentStatus{}, err
	}
	s.created.Add(1) // before: a create whose answer is lost may have committed
	res, err := w.st.CreateTask(ctx, store.CreateTaskParams{ParentID: r.task.ID, Queue: spec.Queue,
		Priority: spec.Priority, Spec: body, IdempotencyKey: "spawn:" + r.task.ID.String() + ":" + req.CallID,
		Labels: r.task.Labels})
	if err != nil {
		return agent.SubagentStatus{}, fmt.Errorf("creating the subagent task: %w", err)
	}
	child := res.Task
	if child.State == store.TaskQueued {
		msg := queue.TaskMessage{Type: queue.MsgStart, TaskID: child.ID.String()}
		if _, err := w.q.Send(ctx, w.childTarget(spec), msg, fleet.StartMsgID(child.ID)); err != nil {
			return agent.SubagentStatus{}, fmt.Errorf("enqueueing the subagent task: %w", err)
		}
		w.metrics.spawns.Inc()
	}
	return agent.SubagentStatus{AgentID: child.ID.String(), Status: subagentStatus(child.State, nil)}, nil
}

// checkRunning refuses a spawn when the store no longer has the parent
// running here (cancelled, typically, before its abort arrived). It is a
// cheap early answer for the model; what makes the rule strict is the
// store, which never starts a child of a cancelled parent.
func (s *spawner) checkRunning(ctx context.Context) error {
	t, err := s.r.w.st.GetTask(ctx, store.GetTaskParams{ID: s.r.task.ID})
	if err != nil {
		return fmt.Errorf("cannot spawn: reading this task's state: %w", err)
	}
	if t.State != store.TaskRunning || t.WorkerID != s.r.w.cfg.ID {
		return fmt.Errorf("cannot spawn: this task is %s and no longer running, so it may not start subagents; stop and report what you have", t.State)
	}
	return nil
}

// checkLive refuses a spawn beyond the parent's cap on unfinished children.
func (s *spawner) checkLive(ctx context.Context, doing string) error {
	kids, err := s.r.w.st.Children(ctx, store.ChildrenParams{ParentID: s.r.task.ID})
	if err != nil {
		return err
	}
	live := 0
	for _, c := range kids.Children {
		if !c.State.Terminal() {
			live++
		}
	}
	if max := s.r.spec.MaxLiveChildren; live >= max {
		return fmt.Errorf("cannot %s: %d subagents are still running and the limit is %d; wait for or close one first", doing, live, max)
	}
	return nil
}

// childSpec derives the child's spec: the parent's profile, effort, tree
// limits, queue and environment (a subdirectory of it with working_dir),
// the requested or the parent's current model, its own turn limit, and the
// parent's limits for the rest (wall time, tokens, cost: each child is
// bounded as its parent is).
func (s *spawner) childSpec(req agent.SpawnRequest) (fleet.TaskSpec, error) {
	r := s.r
	p := r.spec
	env := p.Environment
	if env.Kind == fleet.EnvLocal || env.Kind == "" {
		env = fleet.Environment{Kind: fleet.EnvLocal, WorkingDir: r.env.WorkingDir(), Shared: p.Environment.Shared}
	} else {
		env.WorkingDir = r.env.WorkingDir()
	}
	if req.WorkingDir != "" {
		sub := path.Clean(req.WorkingDir)
		if path.IsAbs(sub) || sub == ".." || strings.HasPrefix(sub, "../") {
			return fleet.TaskSpec{}, fmt.Errorf("working_dir %q must be a subdirectory of the working directory", req.WorkingDir)
		}
		env.WorkingDir = path.Join(env.WorkingDir, sub)
	}
	model := req.Model
	if model == "" && r.sess != nil {
		model = r.sess.Model()
	}
	effort := p.ReasoningEffort
	if r.sess != nil {
		effort = r.sess.ReasoningEffort()
	}
	return fleet.TaskSpec{
		Prompt: req.Task, Profile: p.Profile, Model: model, ReasoningEffort: effort,
		Limits:      fleet.Limits{MaxTurns: req.MaxTurns}.Within(p.Limits),
		Environment: env, Session: p.Session, Sandbox: p.Sandbox, // a shared workspace shares its sandbox
		ParentID: r.task.ID, RootID: r.task.RootID, Depth: r.task.Depth + 1,
		MaxSubagentDepth: p.MaxSubagentDepth, MaxLiveChildren: p.MaxLiveChildren, ChildPolicy: p.ChildPolicy,
		Queue: p.Queue, Priority: min(p.Priority+1, fleet.MaxPriority),
		Permissions: p.Permissions,
		Extensions:  p.Extensions, // a child cannot shed its parent's hooks
	}, nil
}

// child returns the task behind an agent id, checking it is a child of
// this parent.
func (s *spawner) child(ctx context.Context, agentID string) (store.Task, error) {
	id, err := uuid.Parse(agentID)
	if err != nil {
		return store.Task{}, fmt.Errorf("no subagent with id %q; use the agent_id that spawn_agent returned", agentID)
	}
	t, err := s.r.w.st.GetTask(ctx, store.GetTaskParams{ID: id})
	if errors.Is(err, store.ErrNotFound) || err == nil && t.ParentID != s.r.task.ID {
		return store.Task{}, fmt.Errorf("no subagent with id %q among yours; use the agent_id that spawn_agent returned", agentID)
	}
	return t, err
}

// Wait returns the child's result when it has ended; otherwise it parks the
// parent (agent.ErrParked) and remembers what it waits for.
func (s *spawner) Wait(ctx context.Context, agentID string) (agent.SubagentResult, error) {
	t, err := s.child(ctx, agentID)
	if err != nil {
		return agent.SubagentResult{}, err
	}
	if !t.State.Terminal() {
		s.mu.Lock()
		s.waits = append(s.waits, t.ID)
		s.mu.Unlock()
		return agent.SubagentResult{}, agent.ErrParked
	}
	return subagentResult(t), nil
}

// subagentResult maps a finished child task to what wait returns.
func subagentResult(t store.Task) agent.SubagentResult {
	res, _ := fleet.DecodeResult(t.Result) // a child without a result reports its task error
	out := res.FinalText
	if !res.Success && res.Error != "" {
		out = strings.TrimSpace(out + "\n\n[subagent " + string(t.State) + ": " + res.Error + "]")
	}
	if out == "" && t.Error != "" {
		out = "[subagent " + string(t.State) + ": " + t.Error + "]"
	}
	return agent.SubagentResult{AgentID: t.ID.String(), Status: subagentStatus(t.State, &res), Output: out,
		Success: t.State == store.TaskSucceeded && res.Success, TurnsUsed: res.TurnsUsed}
}

func subagentStatus(s store.TaskState, res *fleet.TaskResult) string {
	switch s {
	case store.TaskSucceeded:
		return agent.SubagentCompleted
	case store.TaskFailed:
		return agent.SubagentFailed
	case store.TaskCancelled:
		return agent.SubagentClosed
	}
	return agent.SubagentRunning
}

// SendInput steers a running child over its control subject. A child that
// is queued or parked gets the input stored and delivered when it runs
// again. A child that succeeded or failed is reopened: the input is stored,
// the task goes back to queued and a message sends it to a worker, which
// runs the input as a new round of the child's conversation (see
// runWithInputs). A cancelled child takes no input.
func (s *spawner) SendInput(ctx context.Context, agentID, message string) error {
	t, err := s.child(ctx, agentID)
	if err != nil {
		return err
	}
	switch t.State {
	case store.TaskCancelled:
		return cancelledChild(agentID)
	case store.TaskSucceeded, store.TaskFailed: // reopening makes it live again
		if err := s.checkLive(ctx, "give input to ended subagent "+agentID); err != nil {
			return err
		}
	}
	if t.State == store.TaskRunning {
		_, err := s.r.w.q.Control(ctx, fleet.SessionSubject(t.ID), queue.ControlRequest{Op: queue.OpSteer, Message: message})
		if err == nil {
			return nil
		}
		if !errors.Is(err, queue.ErrNotRunning) {
			return err
		}
	}
	name, err := storeInput(ctx, s.r.w.st, t.ID, message)
	if err != nil {
		return fmt.Errorf("storing the input for subagent %s: %w", agentID, err)
	}
	if t.State == store.TaskRunning {
		// Its session no longer serves control requests: the run is
		// ending or handing the task back. Look again, so an end that
		// came meanwhile reopens it.
		if t, err = s.child(ctx, agentID); err != nil {
			return err
		}
	}
	switch t.State {
	case store.TaskSucceeded, store.TaskFailed:
		return s.r.w.reopen(ctx, t, name)
	case store.TaskCancelled:
		return cancelledChild(agentID)
	case store.TaskQueued:
		if !t.StartedAt.IsZero() {
			// Reopened or handed back: it ran before, so its message may be
			// the one a failed publish lost. Another delivery message is
			// harmless (the claim is a compare-and-set) and makes a retried
			// send_input recover.
			return s.r.w.sendInput(ctx, t, name)
		}
	}
	return nil
}

func cancelledChild(agentID string) error {
	return fmt.Errorf("subagent %s was cancelled and cannot take input; spawn a new subagent and give it the context it needs", agentID)
}

// reopen moves an ended child back to queued (compare-and-set from the
// state read; a lost race reads it again) and enqueues the delivery of the
// stored input name. A child found active meanwhile needs nothing more: its
// next run delivers the input.
func (w *Worker) reopen(ctx context.Context, t store.Task, name string) error {
	id := t.ID
	for t.State == store.TaskSucceeded || t.State == store.TaskFailed {
		_, err := w.st.TransitionTask(ctx, store.TransitionTaskParams{ID: id, From: t.State, To: store.TaskQueued})
		if err == nil {
			break
		}
		if !errors.Is(err, store.ErrConflict) {
			return fmt.Errorf("reopening subagent %s: %w", id, err)
		}
		if t, err = w.st.GetTask(ctx, store.GetTaskParams{ID: id}); err != nil {
			return fmt.Errorf("reopening subagent %s: %w", id, err)
		}
		switch t.State {
		case store.TaskCancelled:
			return cancelledChild(id.String())
		case store.TaskSucceeded, store.TaskFailed:
		default:
			return nil // reopened by another sender: a run to come delivers the input
		}
	}
	return w.sendInput(ctx, t, name)
}

// sendInput enqueues the message that runs a reopened task to deliver its
// stored input name. A failure leaves the task queued with its input
// stored, and says how to recover: a later send_input sends a message again.
func (w *Worker) sendInput(ctx context.Context, t store.Task, name string) error {
	id := t.ID
	spec, err := fleet.DecodeSpec(t.Spec)
	if err != nil {
		return fmt.Errorf("reopening subagent %s: %w", id, err)
	}
	if t.Queue != "" {
		spec.Queue = t.Queue
	}
	msg := queue.TaskMessage{Type: queue.MsgInput, TaskID: id.String(), InputID: name}
	if _, err := w.q.Send(ctx, w.childTarget(spec), msg, fleet.InputMsgID(id, name)); err != nil {
		return fmt.Errorf("subagent %s has the input stored and is queued, but the message that runs it was not sent (%w); call send_input again (a short note will do) to send it", id, err)
	}
	return nil
}

// childTarget is where a child's messages go: this worker's own subject
// when the child works in the parent's local workspace (the files are
// here), else the child's queue.
func (w *Worker) childTarget(spec fleet.TaskSpec) queue.Target {
	if pinned(spec) {
		return queue.ToWorker(w.cfg.ID)
	}
	return queue.ToQueue(spec.Queue)
}

// Close cancels the child and its whole subtree.
func (s *spawner) Close(ctx context.Context, agentID string) (agent.SubagentStatus, error) {
	t, err := s.child(ctx, agentID)
	if err != nil {
		return agent.SubagentStatus{}, err
	}
	if !t.State.Terminal() {
		res, err := taskops.CancelTree(ctx, s.r.w.st, s.r.w.q, t.ID, "closed by its parent", s.r.w.q.Config().ControlTimeout)
		if err != nil {
			return agent.SubagentStatus{}, err
		}
		if res.AbortErr != nil {
			s.r.log.Warn("closing a subagent: its session learns of the cancel at its next write", "agent_id", agentID, "err", res.AbortErr)
		}
	}
	return agent.SubagentStatus{AgentID: agentID, Status: agent.SubagentClosed}, nil
}

// CloseAll does nothing: a session closes when it parks or its run ends,
// and children must outlive a parked parent. Children of an ended task are
// cancelled by the worker according to the spec's ChildPolicy.
func (s *spawner) CloseAll(context.Context) {}
