package agent

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/agent/internal/fanout"
	"github.com/agentfleet/agentfleet/execenv"
	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/tools"
)

// Session is one conversation between a model and its tools.
// Exactly one input is processed at a time; the goroutine running it (inside
// Submit or Resume) is the loop owner and the only writer of history. Host
// control methods are safe from any goroutine.
type Session struct {
	id       string
	cfg      Config
	client   llm.Client
	profile  Profile
	env      execenv.Environment
	registry *tools.Registry
	events   *fanout.Hub[Event]
	clock    Clock
	log      *slog.Logger
	spawner  Spawner

	ctx    context.Context // session lifetime; canceled by Abort/Close
	cancel context.CancelFunc

	run     chan struct{} // one slot, held by the loop owner
	queued  atomic.Int32  // Submits waiting for the slot
	done    chan struct{} // closed when the session is CLOSED
	parkIDs sync.Map      // call id -> struct{}: calls that asked to park this round
	fullOut sync.Map      // call id -> whole output of a truncated result, until its turn is recorded
	cmdTime atomic.Int64  // SetCommandTimeout's default command timeout (ns); 0 = the config's
	perms   permLog       // permission records of the running round
	reads   *tools.Reads  // what this session's file tools read and wrote (read-before-write)
	watch   watchdog      // rounds without progress; the loop owner's
	cut     cutMark       // the call of the running round its output limit cut; set by the loop owner before the round

	mu          sync.Mutex // guards the fields below
	state       State
	history     []Turn        // appended by the loop owner only
	msgs        []llm.Message // history converted for the model, up to converted
	converted   int           // how many turns msgs covers
	assistant   int           // assistant turns in history (the MaxTurns count)
	steering    []string
	followUps   []string
	model       string
	effort      string
	prompts     map[string]string // system prompt per model, built once
	started     bool
	inputCancel context.CancelCauseFunc // cancels the running input
	warned      bool                    // context WARNING emitted for the current input
	cw          windowState             // context accounting (context.go); the loop owner's
}

// New creates a session in state IDLE. No event is emitted until the first
// input (SESSION_START comes first), so subscribe right after New.
func New(cfg Config) (*Session, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.WithDefaults()
	id := cfg.ID
	if id == "" {
		id = uuid.NewString()
	}
	s := &Session{
		id: id, cfg: cfg, client: cfg.Client, profile: cfg.Profile, env: cfg.Env,
		registry: cfg.Profile.Registry().Clone(),
		events:   newEventHub(id, cfg.Clock, cfg.EventBuffer),
		clock:    cfg.Clock, log: cfg.Logger.With("session_id", id),
		run: make(chan struct{}, 1), done: make(chan struct{}),
		state: StateIdle, history: append([]Turn(nil), cfg.History...),
		model: cfg.Model, effort: cfg.Session.ReasoningEffort, prompts: map[string]string{},
		reads: tools.NewReads(),
	}
	if s.model == "" {
		s.model = cfg.Profile.Model()
	}
	s.assistant = countAssistantTurns(s.history)
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.spawner = cfg.Spawner
	if s.spawner == nil {
		s.spawner = newLocalSpawner(s)
	}
	if s.canSpawn() {
		s.registerSubagentTools()
	}
	s.registry.Settle(s.execOptions().Settings)
	s.restoreWindow()
	return s, nil
}

// Resume rebuilds a session from the turns cfg.Recorder recorded under
// cfg.ID (or cfg.History when given). Call Continue to finish an input that
// was cut short.
func Resume(ctx context.Context, cfg Config) (*Session, error) {
	if cfg.ID == "" {
		return nil, fmt.Errorf("agent.Resume: Config.ID is required: name the session to resume")
	}
	if cfg.History == nil && cfg.Recorder != nil {
		h, err := cfg.Recorder.Load(ctx, cfg.ID)
		if err != nil {
			return nil, fmt.Errorf("agent.Resume: load history of %s: %w", cfg.ID, err)
		}
		cfg.History = h
	}
	return New(cfg)
}

// ID is the session's UUID.
func (s *Session) ID() string { return s.id }

// Depth is the subagent nesting level (0 at the top).
func (s *Session) Depth() int { return s.cfg.Depth }

// Env is the execution environment tools run in.
func (s *Session) Env() execenv.Environment { return s.env }

// Registry is the session's own tool registry (a clone of the profile's);
// register custom tools here, latest wins.
func (s *Session) Registry() *tools.Registry { return s.registry }

// State returns the current state.
func (s *Session) State() State {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state
}

// History returns a copy of the turns so far.
func (s *Session) History() []Turn {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Turn(nil), s.history...)
}

// view returns the history without copying it: turns are append-only and
// never modified, so the slice stays valid while the loop appends.
func (s *Session) view() []Turn {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clip(s.history)
}

// Model is the model the next LLM call uses.
func (s *Session) Model() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.model
}

// ReasoningEffort is the effort the next LLM call uses.
func (s *Session) ReasoningEffort() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.effort
}

// Subscribe returns a new subscription to the session's events from now on.
func (s *Session) Subscribe() *Subscription { return &Subscription{sub: s.events.Subscribe()} }

// Done is closed when the session reaches CLOSED.
func (s *Session) Done() <-chan struct{} { return s.done }

// emit stamps ev and delivers it to every subscriber; it never blocks.
func (s *Session) emit(ev Event) { s.events.Publish(ev) }

// appendTurn stamps t, records it durably, then adds it to history.
// Only the loop owner calls it.
func (s *Session) appendTurn(ctx context.Context, t Turn) error {
	s.mu.Lock()
	t.Index = len(s.history)
	s.mu.Unlock()
	t.Time = s.clock.Now()
	if s.cfg.Recorder != nil {
		if err := s.cfg.Recorder.Append(context.WithoutCancel(ctx), s.id, t); err != nil {
			return &recordError{err: err}
		}
	}
	s.mu.Lock()
	s.history = append(s.history, t)
	if t.Kind == TurnAssistant {
		s.assistant++
	}
	s.mu.Unlock()
	return nil
}

type recordError struct{ err error }

func (e *recordError) Error() string { return "agent: record turn: " + e.err.Error() }
func (e *recordError) Unwrap() error { return e.err }
