package compact

import (
	"fmt"
	"slices"
	"strings"
)

// Kind is what the planner needs to know of a turn.
type Kind uint8

const (
	// KindOther is a turn the model never sees (a compaction record).
	KindOther Kind = iota
	// KindUser is a user or steering message: a view may start there.
	KindUser
	// KindAssistant is a model answer: a view may start there, and its tool
	// results follow it.
	KindAssistant
	// KindResults holds tool results; it belongs with the assistant turn
	// before it, so a view never starts there.
	KindResults
)

// Turn is what the planner knows of one recorded turn.
type Turn struct {
	Kind Kind
	// Chars counts the characters the turn adds to a request when sent whole.
	Chars int
	// Stubbed counts them once its tool-result bodies are stubs (Chars for
	// turns without results).
	Stubbed int
}

// View is the compacted view of a history: what a request holds besides
// the system prompt and the tools. The zero View is the whole history.
// A view is a function of the recorded turns and the last compaction
// record, so a resumed session rebuilds exactly the view the session had.
type View struct {
	// Summary stands for turns [0, SummaryThrough).
	Summary        string `json:"summary,omitempty"`
	SummaryThrough int    `json:"summary_through,omitempty"`
	// Start is the first turn sent as recorded. Turns before it and from
	// SummaryThrough on were trimmed: left out without a summary.
	Start int `json:"start,omitempty"`
	// PruneBefore: the tool results of turns before it are sent as stubs.
	PruneBefore int `json:"prune_before,omitempty"`
	// Memory is the notes file the model wrote in a memory flush, as read
	// at the compaction.
	Memory string `json:"memory,omitempty"`
}

// Preamble is the user message that opens a view starting after turn 0,
// or "" when the view starts at the beginning. It keeps a conversation
// opening with the user, as every provider requires.
func (v View) Preamble() string {
	if v.Start == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("[Context compacted] This conversation grew too long for the context window. ")
	if v.Summary != "" {
		fmt.Fprintf(&b, "Its first %d turns are replaced by the summary below. ", v.SummaryThrough)
	}
	if v.Start > v.SummaryThrough {
		fmt.Fprintf(&b, "Turns %d to %d were left out without a summary. ", v.SummaryThrough, v.Start-1)
	}
	b.WriteString("The full record is kept: read_tool_output returns the output of any earlier tool call by its call id. " +
		"Continue the task from where it stands; do not start over.")
	if v.Summary != "" {
		b.WriteString("\n\n<summary>\n")
		b.WriteString(strings.TrimSpace(v.Summary))
		b.WriteString("\n</summary>")
	}
	if v.Memory != "" {
		b.WriteString("\n\nYour own notes from earlier in this session:\n<memory>\n")
		b.WriteString(strings.TrimSpace(v.Memory))
		b.WriteString("\n</memory>")
	}
	return b.String()
}

// Stub is what an old tool result's body becomes when pruned.
func Stub(name, callID string, chars int) string {
	if name == "" {
		name = "tool"
	}
	return fmt.Sprintf("[Output of the %s call %s (%d characters) was removed from the context to save room. "+
		"Call read_tool_output with call_id %q to read it again.]", name, callID, chars, callID)
}

// Size counts the characters of a view of turns: its preamble and every
// turn from Start, stubbed before PruneBefore.
func (v View) Size(turns []Turn) int {
	n := 0
	if p := v.Preamble(); p != "" {
		n += len(p) + messageOverhead
	}
	for i := v.Start; i < len(turns); i++ {
		if i < v.PruneBefore {
			n += turns[i].Stubbed
		} else {
			n += turns[i].Chars
		}
	}
	return n
}

// validStart reports whether a view may start at turn i.
func validStart(turns []Turn, i int) bool {
	return i < len(turns) && (turns[i].Kind == KindUser || turns[i].Kind == KindAssistant)
}

// lastStart is the last turn a view may start at, or -1.
func lastStart(turns []Turn) int {
	for i := range slices.Backward(turns) {
		if validStart(turns, i) {
			return i
		}
	}
	return -1
}

// nextStart is the first valid start after i, or -1.
func nextStart(turns []Turn, i int) int {
	for j := i + 1; j < len(turns); j++ {
		if validStart(turns, j) {
			return j
		}
	}
	return -1
}

// pruneBefore is the turn before which tool results are stubbed so that
// the keep latest tool-result turns stay whole (0 when there are not more
// than keep).
func pruneBefore(turns []Turn, keep int) int {
	seen := 0
	for i, turn := range slices.Backward(turns) {
		if turn.Kind == KindResults {
			seen++
			if seen == keep {
				return i
			}
		}
	}
	return 0
}

// keepFrom is where a summary should end: the earliest valid start after
// from whose suffix fits in budget characters, and never after the last
// valid start (the latest round always stays verbatim). It returns from
// when nothing can be summarized.
func keepFrom(turns []Turn, v View, budget int) int {
	last := lastStart(turns)
	if last <= v.Start {
		return v.Start
	}
	best, tail := last, 0
	for i := len(turns) - 1; i > v.Start; i-- {
		if i < v.PruneBefore {
			tail += turns[i].Stubbed
		} else {
			tail += turns[i].Chars
		}
		if tail > budget {
			break
		}
		if validStart(turns, i) && i < best {
			best = i
		}
	}
	return best
}
