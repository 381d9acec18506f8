package fleet

// ContextSpec is how a task's session keeps inside the model's context
// window (TaskSpec.Context). Zero fields take the worker's value, else
// the model's (agent/compact documents the defaults).
type ContextSpec struct {
	// Window is the model's context size in tokens; 0 means the worker's
	// provider setting, else the model's known window (32,768 for an
	// OpenAI-compatible model the table does not know). A worker's
	// context_window, when set, bounds it.
	Window int `json:"window,omitempty"`
	// Reserve is the room kept for the answer, in tokens.
	Reserve int `json:"reserve,omitempty"`
	// KeepRecentRounds is how many of the latest tool-result turns stay whole.
	KeepRecentRounds int `json:"keep_recent_rounds,omitempty"`
	// SummaryModel writes the summaries (a cheaper model of the same provider).
	SummaryModel string `json:"summary_model,omitempty"`
	// Disabled turns compaction off: the session warns, and a context
	// overflow ends the task.
	Disabled bool `json:"disabled,omitempty"`
	// MemoryFlush gives the model, before a compaction that summarizes, a
	// silent turn to write lasting notes to MEMORY.md in its working
	// directory (or answer NO_REPLY, never shown); the notes are carried
	// into the compacted context. Off by default.
	MemoryFlush bool `json:"memory_flush,omitempty"`
	// RepoMemory keeps notes per repository across tasks: the newest notes
	// of environment.repo are loaded when the task starts (into MEMORY.md
	// and the system prompt) and its MEMORY.md is stored when it ends. It
	// turns memory_flush on and needs environment.repo. Off by default.
	RepoMemory bool `json:"repo_memory,omitempty"`
}

// MinContextWindow is the smallest window a spec may ask for: below it no
// system prompt and tool set fits. A session also refuses, at its start, a
// window smaller than its own system prompt and tools, naming both sizes.
const MinContextWindow = 4096

// checkContext validates the context fields and what they need of the rest
// of the spec.
func (s TaskSpec) checkContext() *FieldError {
	if s.Context.RepoMemory && s.Environment.Repo == "" {
		return fieldErr("context.repo_memory", "needs environment.repo: notes are kept per repository")
	}
	return s.Context.check()
}

// check validates the context fields.
func (c ContextSpec) check() *FieldError {
	switch {
	case c.Window < 0:
		return fieldErr("context.window", "must be >= 0 tokens (0 = the model's window), got %d", c.Window)
	case c.Window > 0 && c.Window < MinContextWindow:
		return fieldErr("context.window", "is %d tokens, less than the %d a system prompt and tools need; raise it or leave it 0 for the model's window", c.Window, MinContextWindow)
	case c.Window > 100_000_000:
		return fieldErr("context.window", "is %d tokens, more than any model has; leave it 0 for the model's window", c.Window)
	case c.Reserve < 0:
		return fieldErr("context.reserve", "must be >= 0 tokens (0 = the default), got %d", c.Reserve)
	case c.Window > 0 && c.Reserve >= c.Window/2:
		return fieldErr("context.reserve", "is %d tokens, at least half of context.window (%d); lower it", c.Reserve, c.Window)
	case c.KeepRecentRounds < 0 || c.KeepRecentRounds > 100:
		return fieldErr("context.keep_recent_rounds", "must be 0..100 (0 = 3), got %d", c.KeepRecentRounds)
	case len(c.SummaryModel) > MaxNameBytes:
		return fieldErr("context.summary_model", "is longer than %d bytes", MaxNameBytes)
	}
	return nil
}
