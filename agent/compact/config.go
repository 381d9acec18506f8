package compact

import "fmt"

// Config says how a session keeps its requests inside the model's context
// window. The zero value means the documented defaults; the window itself
// comes from the profile unless Window is set.
type Config struct {
	// Window is the model's context size in tokens; 0 means the profile's.
	Window int `json:"window,omitempty"`
	// Reserve is the room kept for the answer, in tokens; 0 means
	// min(20000, Window/8).
	Reserve int `json:"reserve,omitempty"`
	// Buffer is kept free below Window-Reserve so that compaction does not
	// fire on every turn; 0 means min(13000, Window/10).
	Buffer int `json:"buffer,omitempty"`
	// KeepRecentRounds is how many of the latest tool-result turns prune
	// leaves whole; 0 means 3.
	KeepRecentRounds int `json:"keep_recent_rounds,omitempty"`
	// SummaryModel writes the summaries; "" means the profile's summary
	// model, else the session's model.
	SummaryModel string `json:"summary_model,omitempty"`
	// Disabled turns proactive compaction off: the session only warns, and
	// a context-length error from the provider ends the input as before.
	Disabled bool `json:"disabled,omitempty"`
	// MemoryFlush gives the model, before a compaction, a silent turn to
	// write lasting notes to MemoryFile (or answer NO_REPLY); the file is
	// then carried into the compacted context. Off by default.
	MemoryFlush bool `json:"memory_flush,omitempty"`
	// MemoryFile is the notes file in the working directory; "" means MEMORY.md.
	MemoryFile string `json:"memory_file,omitempty"`
}

// DefaultMemoryFile is the notes file of a memory flush.
const DefaultMemoryFile = "MEMORY.md"

// MemoryPath is the notes file of a memory flush.
func (c Config) MemoryPath() string {
	if c.MemoryFile == "" {
		return DefaultMemoryFile
	}
	return c.MemoryFile
}

// Defaults of Config.
const (
	DefaultReserve          = 20_000
	DefaultBuffer           = 13_000
	DefaultKeepRecentRounds = 3
)

// Validate reports the first invalid field.
func (c Config) Validate() error {
	switch {
	case c.Window < 0:
		return fmt.Errorf("Context.Window must be >= 0 tokens (0 = the model's window), got %d", c.Window)
	case c.Reserve < 0:
		return fmt.Errorf("Context.Reserve must be >= 0 tokens (0 = the default), got %d", c.Reserve)
	case c.Buffer < 0:
		return fmt.Errorf("Context.Buffer must be >= 0 tokens (0 = the default), got %d", c.Buffer)
	case c.KeepRecentRounds < 0:
		return fmt.Errorf("Context.KeepRecentRounds must be >= 0 (0 = %d), got %d", DefaultKeepRecentRounds, c.KeepRecentRounds)
	case c.Window > 0 && c.Reserve+c.Buffer >= c.Window:
		return fmt.Errorf("Context.Reserve (%d) plus Context.Buffer (%d) must be less than Context.Window (%d)", c.Reserve, c.Buffer, c.Window)
	}
	return nil
}

// Budget is the token arithmetic of one window.
type Budget struct {
	// Window is the model's context size.
	Window int `json:"window"`
	// Reserve is kept for the answer.
	Reserve int `json:"reserve"`
	// Threshold is the estimate above which compaction runs:
	// Window - Reserve - Buffer.
	Threshold int `json:"threshold"`
	// Target is what compaction aims for, well below Threshold, so the
	// next compaction is many turns away.
	Target int `json:"target"`
	// Hard is the most a request may hold: Window minus a minimal room
	// for the answer. A view that cannot be brought under it fails.
	Hard int `json:"hard"`
}

// BudgetFor derives the budget of a window of tokens. Reserve defaults to
// DefaultReserve, 20,000 tokens: room for one answer with its reasoning
// and tool calls (more than twice the 8,192 output tokens the anthropic
// client asks for by default). Buffer defaults to DefaultBuffer, 13,000
// tokens: slack for the estimate, which counts characters between two
// reports of the provider, so a request estimated under the threshold
// still fits. A small window would lose most of itself to those, so they
// are capped at an eighth and a tenth of it.
func (c Config) BudgetFor(window int) Budget {
	if c.Window > 0 {
		window = c.Window
	}
	reserve, buffer := c.Reserve, c.Buffer
	if reserve == 0 {
		reserve = min(DefaultReserve, window/8)
	}
	if buffer == 0 {
		buffer = min(DefaultBuffer, window/10)
	}
	threshold := max(window-reserve-buffer, 1)
	return Budget{
		Window: window, Reserve: reserve, Threshold: threshold,
		Target: threshold * 6 / 10, Hard: window - min(reserve, max(window/16, 1)),
	}
}
