package compact

import (
	"fmt"
	"strings"

	"github.com/agentfleet/agentfleet/llm"
)

// SummaryMarker opens the summarizer's system prompt, so a simulated model
// (and a reader of recorded traffic) can tell a summary request from a
// turn of the session.
const SummaryMarker = "[agentfleet context summary]"

// summarySystem is our own prompt for the summarizer.
const summarySystem = SummaryMarker + ` You write the hand-over notes of a coding session that no longer fits the model's context window. ` +
	`Another instance of the assistant continues the work from your notes and the last few turns alone, ` +
	`so keep everything it needs to go on and leave out what it does not.`

// summaryInstructions close the summarizer's user message.
const summaryInstructions = `Write the notes now, in plain text, under these headings:
Task: what the user asked for, with later instructions and constraints; quote exact requirements.
Decisions: what was decided and why, including approaches that were tried and dropped.
Files: every path read, created or changed, and what changed in each.
Current state: what works, what fails, the last results and errors seen.
Next steps: what to do next, in order.
Open questions: what is still unknown or waiting on someone.
Be specific (names, paths, commands, numbers); do not call tools; stay under %d words.`

// SummaryRequest builds the request that asks model for the notes on
// turns (already in the form the view sends them), continuing prev. The
// transcript is cut from its oldest end to at most maxChars characters;
// maxOutput bounds the answer in tokens. It has no tools, so it is valid
// for every provider whatever the turns held.
func SummaryRequest(model, prev string, turns []llm.Message, maxChars, maxOutput int) llm.Request {
	var b strings.Builder
	if prev != "" {
		b.WriteString("Notes on the conversation before this part:\n<previous_summary>\n")
		b.WriteString(strings.TrimSpace(prev))
		b.WriteString("\n</previous_summary>\n\n")
	}
	t := Transcript(turns)
	if maxChars > 0 && len(t) > maxChars {
		t = "[... the oldest part of this transcript was cut to fit ...]\n" + tail(t, maxChars)
	}
	b.WriteString("The conversation to summarize:\n<transcript>\n")
	b.WriteString(t)
	b.WriteString("\n</transcript>\n\n")
	fmt.Fprintf(&b, summaryInstructions, max(maxOutput*3/4, 100))
	return llm.Request{
		Model:           model,
		Messages:        []llm.Message{llm.SystemMessage(summarySystem), llm.UserMessage(b.String())},
		MaxOutputTokens: maxOutput,
	}
}

// Transcript renders messages as plain text, one block per part.
func Transcript(msgs []llm.Message) string {
	var b strings.Builder
	for _, m := range msgs {
		for _, p := range m.Content {
			writePart(&b, m.Role, p)
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

func writePart(b *strings.Builder, role llm.Role, p llm.ContentPart) {
	switch {
	case p.Kind == llm.KindText && p.Text != "":
		fmt.Fprintf(b, "[%s]\n%s\n\n", role, p.Text)
	case p.Kind == llm.KindToolCall && p.ToolCall != nil:
		fmt.Fprintf(b, "[assistant calls %s, id %s]\n%s\n\n", p.ToolCall.Name, p.ToolCall.ID, p.ToolCall.Arguments)
	case p.Kind == llm.KindToolResult && p.ToolResult != nil:
		r := p.ToolResult
		status := "result"
		if r.IsError {
			status = "error"
		}
		fmt.Fprintf(b, "[tool %s of %s, id %s]\n%s\n\n", status, r.Name, r.ToolCallID, r.Content)
	case p.Kind == llm.KindImage:
		fmt.Fprintf(b, "[%s attached an image]\n\n", role)
	}
}

// tail returns the last n bytes of s, starting at a line when one is near.
func tail(s string, n int) string {
	s = s[len(s)-n:]
	if i := strings.IndexByte(s, '\n'); i >= 0 && i < 200 {
		s = s[i+1:]
	}
	return strings.ToValidUTF8(s, "")
}
