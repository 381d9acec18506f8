package tools

import (
	"context"
	"encoding/json"

	"github.com/agentfleet/agentfleet/execenv"
	"github.com/agentfleet/agentfleet/llm"
)

// Tool is one capability offered to the model: a definition the model sees
// and an executor that runs it through an execution environment.
type Tool struct {
	Name        string
	Description string
	// Parameters is a JSON Schema with an object root. Arguments are validated
	// against it before Run is called.
	Parameters json.RawMessage
	// Mutates is true when the tool changes files or runs commands. Calls to
	// tools that do not mutate may run concurrently; mutating calls run in order.
	Mutates bool
	// Paths, when set, returns the paths a call with these arguments
	// (validated against Parameters) reads or writes, as the model gave
	// them: relative to the working directory, or absolute. A patch tool
	// returns every path its patch adds, updates, deletes or moves to; a
	// tool that touches no file returns none (NoPaths). An error means the
	// arguments cannot run (a patch that does not parse): the call then
	// fails with it, as with a schema violation, before any approval. nil
	// means the tool does not say, and the permission layer treats its
	// calls as ones that may touch any path (see package agent/permission).
	// ArgPaths and PatchPaths build the usual ones.
	Paths func(args json.RawMessage) ([]string, error)
	// Limits overrides the default truncation for this tool (zero fields keep
	// the default of DefaultLimits).
	Limits Limits
	// Settle, when set, rebuilds the tool for one session's settings: a
	// description and schema that state the session's own defaults and
	// caps. Registry.Settle applies it; Settled builds such a tool.
	Settle func(Settings) Tool
	// Run executes the call. A returned error becomes an error result the model
	// sees ("Tool error (name): ..."); it never stops the agent loop. Run may
	// also return an Output with IsError set to report a failure with its own text.
	Run func(ctx context.Context, call Call) (Output, error)
}

// Definition is what the model sees.
func (t Tool) Definition() llm.ToolDefinition {
	return llm.ToolDefinition{Name: t.Name, Description: t.Description, Parameters: t.Parameters}
}

// Call is one invocation of a tool.
type Call struct {
	ID   string
	Name string
	// Args are the validated JSON arguments.
	Args json.RawMessage
	// Env is where the tool runs.
	Env execenv.Environment
	// Settings carries session settings tools consult (timeouts).
	Settings Settings
	// OnOutput, when set, receives output as it is produced (shell streaming).
	OnOutput func(chunk string)
	// Reads is what the session has read, for the read-before-write check
	// of the file tools; nil turns the check off.
	Reads *Reads
}

// Settings are session-level knobs that tools read.
type Settings struct {
	// DefaultCommandTimeoutMs is the shell timeout when the call gives none.
	DefaultCommandTimeoutMs int
	// MaxCommandTimeoutMs caps any shell timeout.
	MaxCommandTimeoutMs int
}

// Output is what a tool produced, before truncation.
type Output struct {
	Text    string
	Images  []llm.Image
	IsError bool
}

// Limits bound what the model sees of one tool's output. Characters are cut
// first, then lines. Zero means "use the default"; a negative value disables
// that limit.
type Limits struct {
	MaxChars int
	MaxLines int
	Mode     TruncationMode
}

// TruncationMode says which part of an over-long output is kept.
type TruncationMode string

const (
	HeadTail TruncationMode = "head_tail"
	Tail     TruncationMode = "tail"
)
