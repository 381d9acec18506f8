package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/agentfleet/agentfleet/agent"
)

// outputLines is how many lines of a tool's output are shown.
const outputLines = 8

// printEvents writes the session's events for a person until the stream ends.
func printEvents(ctx context.Context, w io.Writer, sub *agent.Subscription) {
	inText, lastStart := false, ""
	for ev := range sub.All(ctx) {
		if inText && ev.Kind != agent.EventAssistantTextDelta {
			fmt.Fprintln(w)
			inText = false
		}
		switch ev.Kind {
		case agent.EventUserInput:
			fmt.Fprintf(w, "▶ user: %s\n\n", ev.Text)
		case agent.EventAssistantTextDelta:
			if !inText {
				fmt.Fprint(w, "● ")
				inText = true
			}
			fmt.Fprint(w, ev.Text)
		case agent.EventToolCallStart:
			fmt.Fprintf(w, "  → %s %s\n", ev.ToolName, formatArgs(ev.Arguments))
			lastStart = ev.CallID
		case agent.EventToolCallEnd:
			mark := "✓"
			if ev.IsError {
				mark = "✗"
			}
			if ev.CallID != lastStart { // calls ran in parallel: say whose output this is
				mark += " (" + ev.ToolName + " " + ev.CallID + ")"
			}
			lastStart = ""
			fmt.Fprintf(w, "    %s %s\n", mark, indent(shorten(ev.Output, outputLines), "      "))
		case agent.EventSteeringInjected:
			fmt.Fprintf(w, "  ↪ steering: %s\n", ev.Text)
		case agent.EventLoopDetection, agent.EventWarning, agent.EventTurnLimit:
			fmt.Fprintf(w, "  ! %s %s\n", ev.Kind, ev.Text)
		case agent.EventError:
			fmt.Fprintf(w, "  ! error: %s\n", ev.Error)
		case agent.EventInputDone:
			fmt.Fprintf(w, "\n■ done (%s)\n", ev.Stop)
		}
	}
}

// formatArgs renders JSON arguments as key=value pairs, long values cut.
func formatArgs(raw json.RawMessage) string {
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		return string(raw)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		v, _ := json.Marshal(m[k])
		s := string(v)
		if len(s) > 70 {
			s = s[:67] + `..."`
		}
		parts = append(parts, k+"="+s)
	}
	return strings.Join(parts, " ")
}

// shorten keeps the first n lines and says how many were left out.
func shorten(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) <= n {
		return strings.Join(lines, "\n")
	}
	return strings.Join(lines[:n], "\n") + fmt.Sprintf("\n… (%d more lines)", len(lines)-n)
}

func indent(s, prefix string) string {
	return strings.ReplaceAll(s, "\n", "\n"+prefix)
}
