package agent

import (
	"context"
	"time"

	"github.com/agentfleet/agentfleet/execenv"
	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/tools"
)

// Profile is what a session needs from a provider profile (package profiles
// implements it): the model, its tools, its system prompt and its options.
type Profile interface {
	// ID is "openai", "anthropic" or "gemini".
	ID() string
	// Model is the default model identifier.
	Model() string
	// Registry holds the profile's tools. The session clones it, so tools a
	// session adds do not leak into the profile.
	Registry() *tools.Registry
	// BuildSystemPrompt renders the layered system prompt for env and model,
	// with userInstructions appended last.
	BuildSystemPrompt(ctx context.Context, env execenv.Environment, model, userInstructions string) (string, error)
	// ProviderOptions returns the provider-specific request options for the
	// given reasoning effort ("" for the provider default).
	ProviderOptions(reasoningEffort string) llm.ProviderOptions
	// SupportsParallelToolCalls allows concurrent execution of read-only calls.
	SupportsParallelToolCalls() bool
	// SupportsStreaming selects Client.Stream over Client.Complete.
	SupportsStreaming() bool
	// ContextWindow is the model's context size in tokens.
	ContextWindow() int
	// DefaultCommandTimeout is the shell timeout when neither the call nor the
	// session names one.
	DefaultCommandTimeout() time.Duration
}

// Clock tells the time; tests inject a fixed one.
type Clock interface{ Now() time.Time }

// SystemClock is the wall clock.
type SystemClock struct{}

// Now returns time.Now().
func (SystemClock) Now() time.Time { return time.Now() }

// Recorder persists a session's turns. Append is called once per turn, in
// order, before the loop goes on; when it fails the session stops with
// ERROR (durability cannot be promised any more). Load returns the turns
// recorded for a session, in order, to resume it.
type Recorder interface {
	Append(ctx context.Context, sessionID string, turn Turn) error
	Load(ctx context.Context, sessionID string) ([]Turn, error)
}
