package agent

import (
	"context"
	"fmt"
	"sync"

	"github.com/agentfleet/agentfleet/agent/permission"
	"github.com/agentfleet/agentfleet/execenv/subdir"
)

// localSpawner runs children as in-process sessions sharing the parent's
// client, profile and environment. Each child runs its inputs in a goroutine
// the spawner owns and waits for on CloseAll.
type localSpawner struct {
	parent *Session
	wg     sync.WaitGroup

	mu     sync.Mutex // guards agents, byCall and next
	agents map[string]*localChild
	byCall map[string]string // spawn call id -> agent id (idempotent re-runs)
	next   int               // handles are agent-1, agent-2, ... per parent
}

// localChild is one child session and the state of its current run.
type localChild struct {
	id      string // the handle the model uses
	session *Session

	mu     sync.Mutex // guards done, result
	done   chan struct{}
	result SubagentResult
}

func newLocalSpawner(parent *Session) *localSpawner {
	return &localSpawner{parent: parent, agents: map[string]*localChild{}, byCall: map[string]string{}}
}

func (l *localSpawner) Spawn(ctx context.Context, req SpawnRequest) (SubagentStatus, error) {
	l.mu.Lock()
	if id, ok := l.byCall[req.CallID]; ok && req.CallID != "" {
		l.mu.Unlock()
		return l.status(id)
	}
	l.mu.Unlock()
	p := l.parent
	env, err := subdir.Scope(ctx, p.env, req.WorkingDir)
	if err != nil {
		return SubagentStatus{}, fmt.Errorf("working_dir %q: %w", req.WorkingDir, err)
	}
	cfg := p.cfg
	cfg.ID, cfg.History, cfg.Recorder, cfg.Spawner = "", nil, nil, nil
	cfg.ResultSchema = nil // the task's answer is the parent's, not a child's
	cfg.Env, cfg.Depth, cfg.ParentID = env, req.Depth, p.id
	cfg.Model = req.Model
	if cfg.Model == "" {
		cfg.Model = p.Model()
	}
	cfg.Session.MaxTurns = req.MaxTurns
	cfg.Session.MaxToolRoundsPerInput = 0
	if req.ReadOnly {
		cfg.Permissions = cfg.Permissions.Narrowed(permission.ReadOnly(permission.Policy{}))
	}
	child, err := New(cfg)
	if err != nil {
		return SubagentStatus{}, err
	}
	l.mu.Lock()
	l.next++
	c := &localChild{id: fmt.Sprintf("agent-%d", l.next), session: child}
	l.agents[c.id], l.byCall[req.CallID] = c, c.id
	l.mu.Unlock()
	if p.cfg.OnSubagent != nil {
		p.cfg.OnSubagent(child)
	}
	l.start(c, req.Task)
	return SubagentStatus{AgentID: c.id, Status: SubagentRunning}, nil
}

// start runs input on the child in a goroutine the spawner owns.
func (l *localSpawner) start(c *localChild, input string) {
	done := make(chan struct{})
	c.mu.Lock()
	c.done = done
	c.result = SubagentResult{AgentID: c.id, Status: SubagentRunning}
	c.mu.Unlock()
	l.wg.Go(func() {
		defer close(done)
		out, err := c.session.Submit(context.Background(), input)
		r := SubagentResult{AgentID: c.id, Output: out.Text, TurnsUsed: c.session.turns()}
		r.Success = err == nil && (out.Stop == StopCompleted || out.Stop == StopAwaitingInput)
		r.Status = SubagentCompleted
		if !r.Success {
			r.Status = SubagentFailed
			if err != nil && r.Output == "" {
				r.Output = err.Error()
			}
		}
		c.mu.Lock()
		c.result = r
		c.mu.Unlock()
	})
}

func (l *localSpawner) child(id string) (*localChild, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	c, ok := l.agents[id]
	if !ok {
		return nil, fmt.Errorf("no subagent with id %q; use the agent_id that spawn_agent returned", id)
	}
	return c, nil
}

func (l *localSpawner) status(id string) (SubagentStatus, error) {
	c, err := l.child(id)
	if err != nil {
		return SubagentStatus{}, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.result.Status
	if c.session.isClosing() {
		st = SubagentClosed
	}
	return SubagentStatus{AgentID: id, Status: st}, nil
}

// SendInput steers a running child, or starts a new input on a finished one.
func (l *localSpawner) SendInput(ctx context.Context, id, message string) error {
	c, err := l.child(id)
	if err != nil {
		return err
	}
	c.mu.Lock()
	done := c.done
	c.mu.Unlock()
	select {
	case <-done:
		if c.session.isClosing() {
			return fmt.Errorf("subagent %s is closed; spawn a new one", id)
		}
		l.start(c, message)
		return nil
	default:
		return c.session.Steer(message)
	}
}

func (l *localSpawner) Wait(ctx context.Context, id string) (SubagentResult, error) {
	c, err := l.child(id)
	if err != nil {
		return SubagentResult{}, err
	}
	c.mu.Lock()
	done := c.done
	c.mu.Unlock()
	select {
	case <-done:
	case <-ctx.Done():
		return SubagentResult{}, ctx.Err()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.result, nil
}

func (l *localSpawner) Close(ctx context.Context, id string) (SubagentStatus, error) {
	c, err := l.child(id)
	if err != nil {
		return SubagentStatus{}, err
	}
	c.session.Abort()
	c.mu.Lock()
	done := c.done
	c.mu.Unlock()
	<-done
	return SubagentStatus{AgentID: id, Status: SubagentClosed}, nil
}

func (l *localSpawner) CloseAll(ctx context.Context) {
	l.mu.Lock()
	children := make([]*localChild, 0, len(l.agents))
	for _, c := range l.agents {
		children = append(children, c)
	}
	l.mu.Unlock()
	for _, c := range children {
		c.session.Abort()
	}
	l.wg.Wait()
}

// turns counts the session's assistant turns.
func (s *Session) turns() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.assistant
}
