package agent

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/agentfleet/agentfleet/agent/compact"
	"github.com/agentfleet/agentfleet/agent/permission"
	"github.com/agentfleet/agentfleet/execenv"
	"github.com/agentfleet/agentfleet/llm"
)

// SessionConfig holds a session's limits and switches. The zero value means the
// documented defaults; WithDefaults fills them in.
type SessionConfig struct {
	// MaxTurns bounds assistant turns (model calls) across the whole session;
	// 0 means unlimited.
	MaxTurns int `json:"max_turns,omitempty"`
	// MaxToolRoundsPerInput bounds tool rounds for one input; 0 means unlimited.
	MaxToolRoundsPerInput int `json:"max_tool_rounds_per_input,omitempty"`
	// DefaultCommandTimeout applies when a shell call names no timeout.
	// 0 means the profile's default (openai and gemini 10 s, anthropic 120 s).
	DefaultCommandTimeout time.Duration `json:"default_command_timeout,omitempty"`
	// MaxCommandTimeout caps any shell timeout; 0 means 10 minutes.
	MaxCommandTimeout time.Duration `json:"max_command_timeout,omitempty"`
	// ReasoningEffort is "", "low", "medium" or "high" (some providers accept
	// "minimal" or "xhigh"); "" means the provider's default.
	ReasoningEffort string `json:"reasoning_effort,omitempty"`
	// ToolOutputLimits overrides the character limit per tool name.
	ToolOutputLimits map[string]int `json:"tool_output_limits,omitempty"`
	// ToolLineLimits overrides the line limit per tool name.
	ToolLineLimits map[string]int `json:"tool_line_limits,omitempty"`
	// DisableLoopDetection turns loop detection off (it is on by default).
	DisableLoopDetection bool `json:"disable_loop_detection,omitempty"`
	// LoopDetectionWindow is how many recent tool calls are compared; 0 means 10.
	LoopDetectionWindow int `json:"loop_detection_window,omitempty"`
	// NoProgressRounds is how many tool rounds in a row may make no
	// progress before the model is told so; if half as many again make
	// none, the input stops with StopNoProgress (8: told after 8, stopped
	// after 12). 0 means DefaultNoProgressRounds, a negative value turns
	// the watchdog off.
	NoProgressRounds int `json:"no_progress_rounds,omitempty"`
	// MaxSubagentDepth bounds subagent nesting; 0 means 1, a negative value
	// forbids subagents altogether.
	MaxSubagentDepth int `json:"max_subagent_depth,omitempty"`
	// QueueMode says what Submit does while an input is processing; "" means queue.
	QueueMode QueueMode `json:"queue_mode,omitempty"`
	// MaxQueueDepth bounds Submits waiting in QueueQueue mode; 0 means 10.
	MaxQueueDepth int `json:"max_queue_depth,omitempty"`
	// MaxOutputTokens bounds one model answer (max_output_tokens); 0 means
	// the operator's Config.DefaultMaxOutputTokens. Either is lowered to
	// the model's own maximum (pricing.MaxOutputTokens). A tool call the
	// limit cuts is asked for again once with the model's maximum, else
	// the model is told to split the work.
	MaxOutputTokens int `json:"max_output_tokens,omitempty"`
	// UserInstructions are appended last to the system prompt.
	UserInstructions string `json:"user_instructions,omitempty"`
	// Context configures the context window and compaction (package compact).
	Context compact.Config `json:"context,omitzero"`
}

// Defaults of SessionConfig.
const (
	DefaultMaxCommandTimeout   = 10 * time.Minute
	DefaultLoopDetectionWindow = 10
	DefaultMaxSubagentDepth    = 1
	DefaultMaxQueueDepth       = 10
	DefaultEventBuffer         = 1024
)

var validEfforts = map[string]bool{"": true, "minimal": true, "low": true, "medium": true, "high": true, "xhigh": true}

// WithDefaults returns c with zero fields replaced by their defaults.
func (c SessionConfig) WithDefaults() SessionConfig {
	if c.MaxCommandTimeout == 0 {
		c.MaxCommandTimeout = DefaultMaxCommandTimeout
	}
	if c.LoopDetectionWindow == 0 {
		c.LoopDetectionWindow = DefaultLoopDetectionWindow
	}
	if c.MaxSubagentDepth == 0 {
		c.MaxSubagentDepth = DefaultMaxSubagentDepth
	}
	if c.QueueMode == "" {
		c.QueueMode = QueueQueue
	}
	if c.MaxQueueDepth == 0 {
		c.MaxQueueDepth = DefaultMaxQueueDepth
	}
	return c
}

// Validate reports the first invalid field.
func (c SessionConfig) Validate() error {
	switch {
	case c.MaxTurns < 0:
		return fmt.Errorf("SessionConfig.MaxTurns must be >= 0 (0 = unlimited), got %d", c.MaxTurns)
	case c.MaxToolRoundsPerInput < 0:
		return fmt.Errorf("SessionConfig.MaxToolRoundsPerInput must be >= 0 (0 = unlimited), got %d", c.MaxToolRoundsPerInput)
	case c.DefaultCommandTimeout < 0:
		return fmt.Errorf("SessionConfig.DefaultCommandTimeout must be >= 0, got %s", c.DefaultCommandTimeout)
	case c.MaxCommandTimeout < 0:
		return fmt.Errorf("SessionConfig.MaxCommandTimeout must be >= 0, got %s", c.MaxCommandTimeout)
	case c.DefaultCommandTimeout > 0 && c.MaxCommandTimeout > 0 && c.DefaultCommandTimeout > c.MaxCommandTimeout:
		return fmt.Errorf("SessionConfig.DefaultCommandTimeout (%s) must not exceed MaxCommandTimeout (%s)", c.DefaultCommandTimeout, c.MaxCommandTimeout)
	case !validEfforts[c.ReasoningEffort]:
		return fmt.Errorf("SessionConfig.ReasoningEffort must be one of low, medium, high (or minimal, xhigh) or empty, got %q", c.ReasoningEffort)
	case c.LoopDetectionWindow < 0:
		return fmt.Errorf("SessionConfig.LoopDetectionWindow must be >= 1, got %d", c.LoopDetectionWindow)
	case c.MaxQueueDepth < 0:
		return fmt.Errorf("SessionConfig.MaxQueueDepth must be >= 0, got %d", c.MaxQueueDepth)
	case c.MaxOutputTokens < 0:
		return fmt.Errorf("SessionConfig.MaxOutputTokens must be >= 0 (0 = the operator's default), got %d", c.MaxOutputTokens)
	}
	if err := c.Context.Validate(); err != nil {
		return fmt.Errorf("SessionConfig.%w", err)
	}
	switch c.QueueMode {
	case "", QueueQueue, QueueReject, QueueInterrupt:
	default:
		return fmt.Errorf("SessionConfig.QueueMode must be queue, reject or interrupt, got %q", c.QueueMode)
	}
	for name, n := range c.ToolOutputLimits {
		if n == 0 {
			return fmt.Errorf("SessionConfig.ToolOutputLimits[%q] must be non-zero (negative disables the limit)", name)
		}
	}
	for name, n := range c.ToolLineLimits {
		if n == 0 {
			return fmt.Errorf("SessionConfig.ToolLineLimits[%q] must be non-zero (negative disables the limit)", name)
		}
	}
	return nil
}

// QueueMode says what Submit does when the session is already processing.
type QueueMode string

const (
	// QueueQueue waits for the running input to finish, then runs (FIFO).
	QueueQueue QueueMode = "queue"
	// QueueReject returns ErrBusy at once.
	QueueReject QueueMode = "reject"
	// QueueInterrupt stops the running input (its Submit returns
	// ErrInterrupted) and then runs the new one.
	QueueInterrupt QueueMode = "interrupt"
)

// Config is everything New needs. Client, Profile and Env are required.
type Config struct {
	Client  llm.Client
	Profile Profile
	Env     execenv.Environment
	Session SessionConfig

	// ID is the session id; "" means a new UUID. Set it (with History or a
	// Recorder that can Load) to resume a session.
	ID string
	// History is a recorded history to continue from (see Resume).
	History []Turn
	// Model overrides the profile's model; "" keeps it.
	Model string
	// DefaultMaxOutputTokens is the operator's max_output_tokens for a
	// session whose SessionConfig.MaxOutputTokens is 0; 0 means
	// DefaultMaxOutputTokens. Subagents inherit it.
	DefaultMaxOutputTokens int
	// Depth is the subagent nesting level: 0 for a top-level session.
	Depth int
	// ParentID is the id of the session that spawned this one, if any.
	ParentID string

	// Permissions checks every tool call before it runs (see package
	// permission); nil allows every call. Subagents share it.
	Permissions *permission.Checker
	// Approver answers the calls Permissions asks about; nil denies them
	// with a message saying no one can be asked.
	Approver Approver

	// Recorder persists turns; nil keeps history in memory only.
	Recorder Recorder
	// Spawner runs subagents; nil means in-process child sessions.
	Spawner Spawner
	// OnSubagent, when set, is called with each in-process child session
	// before its first input runs, so a host can subscribe to its events.
	OnSubagent func(child *Session)
	// Clock stamps turns and events; nil means the wall clock.
	Clock Clock
	// Price, when set, says what a model call cost in US dollars (model:
	// the one that answered, else the one asked); its trace span carries
	// it (agentfleet.usage.cost_usd). It is called only while the span is
	// recorded; nil records no cost.
	Price func(model string, u llm.Usage) float64
	// Logger receives diagnostics; nil means slog.Default().
	Logger *slog.Logger
	// EventBuffer is each subscriber's buffer of droppable events (deltas);
	// 0 means DefaultEventBuffer.
	EventBuffer int
	// Hooks run at the points of the session's life HookPoint names, in
	// order (see Hook); nil runs none.
	Hooks []Hook
	// Redactor replaces the secrets it knows in every tool's output (its
	// output deltas, its result) after the post-tool hooks and before the
	// result is recorded, emitted or sent to the model; nil redacts
	// nothing. Subagents share it.
	Redactor *Redactor

	// ResultSchema, when set, is the form the final answer of every input
	// must take: one JSON object valid against its Schema (see the package
	// doc, "Structured results"); nil allows free text. Subagents do not
	// inherit it.
	ResultSchema *llm.ResponseFormat
	// ResultRepairs bounds how often an answer that does not match
	// ResultSchema goes back to the model within one input: 0 means
	// DefaultResultRepairs, a negative value none.
	ResultRepairs int
}

// Validate reports the first missing or invalid field.
func (c Config) Validate() error {
	switch {
	case c.Client == nil:
		return errors.New("agent.Config.Client is required: pass an llm.Client (for example from llm/provider.New)")
	case c.Profile == nil:
		return errors.New("agent.Config.Profile is required: pass a profile such as profiles.OpenAI(model)")
	case c.Env == nil:
		return errors.New("agent.Config.Env is required: pass an execenv.Environment such as execenv.NewLocal")
	case c.Depth < 0:
		return fmt.Errorf("agent.Config.Depth must be >= 0, got %d", c.Depth)
	case c.EventBuffer < 0:
		return fmt.Errorf("agent.Config.EventBuffer must be >= 0, got %d", c.EventBuffer)
	case c.DefaultMaxOutputTokens < 0:
		return fmt.Errorf("agent.Config.DefaultMaxOutputTokens must be >= 0 (0 = %d), got %d", DefaultMaxOutputTokens, c.DefaultMaxOutputTokens)
	}
	if err := c.Session.Validate(); err != nil {
		return fmt.Errorf("agent.Config.%w", err)
	}
	if c.ResultSchema != nil {
		if err := c.ResultSchema.Check(); err != nil {
			return fmt.Errorf("agent.Config.ResultSchema: %w", err)
		}
	}
	return nil
}

// WithDefaults returns c with zero fields replaced by their defaults.
func (c Config) WithDefaults() Config {
	c.Session = c.Session.WithDefaults()
	if c.Clock == nil {
		c.Clock = SystemClock{}
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.EventBuffer == 0 {
		c.EventBuffer = DefaultEventBuffer
	}
	return c
}
