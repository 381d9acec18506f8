package scripted

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"

	"github.com/agentfleet/agentfleet/llm/sim"
)

// A session that outgrows its context window compacts its conversation:
// a summary written by the model replaces the older turns, so the first
// user message no longer carries the script and the assistant messages no
// longer count every turn. The model copes without state of its own:
//
//   - it answers a summary request (one whose system prompt opens with
//     summaryMarker) with notes that carry the task prompt, quoted, after
//     promptTag, so the script travels in the compacted conversation;
//   - it reads the turn from its own tool call ids (toolu_<turn>_<i>): the
//     last assistant message with one is that turn, and every assistant
//     message after it one more.

// summaryMarker opens the system prompt of the agent's summary requests
// (agent/compact.SummaryMarker; llm may not import agent).
const summaryMarker = "[agentfleet context summary]"

// promptTag introduces the quoted task prompt in a summary.
const promptTag = "#agentfleet-prompt "

var callID = regexp.MustCompile(`^toolu_(\d+)_\d+$`)

// isSummaryRequest reports whether body asks for a summary.
func isSummaryRequest(body []byte) bool { return bytes.Contains(body, []byte(summaryMarker)) }

// summaryReply carries the task prompt found in a summary request's text.
func summaryReply(text string) sim.Reply {
	q, _ := json.Marshal(promptIn(text))
	return sim.Reply{Text: "Notes of the scripted model.\n" + promptTag + string(q), Usage: usage()}
}

// promptIn finds the task prompt in text: quoted after promptTag (a
// summary), or as written, from the line that holds the script marker.
func promptIn(text string) string {
	if _, rest, ok := strings.Cut(text, promptTag); ok {
		var p string
		if json.NewDecoder(strings.NewReader(rest)).Decode(&p) == nil {
			return p
		}
	}
	i := strings.Index(text, scriptMarker)
	if i < 0 {
		return ""
	}
	start := strings.LastIndex(text[:i], "\n[user]\n")
	if start < 0 {
		start = strings.LastIndex(text[:i], "[user]\n")
		if start < 0 {
			return ""
		}
		start += len("[user]\n")
	} else {
		start += len("\n[user]\n")
	}
	rest := text[i+len(scriptMarker):]
	dec := json.NewDecoder(strings.NewReader(rest))
	var steps json.RawMessage
	if dec.Decode(&steps) != nil {
		return ""
	}
	return text[start : i+len(scriptMarker)+int(dec.InputOffset())]
}

// turnFromIDs returns the turn read from the model's own tool call ids,
// or -1 when the conversation has none.
func turnFromIDs(msgs []sim.AnthropicMessage) int {
	assistants, last, lastAt := 0, -1, 0
	for _, m := range msgs {
		if m.Role != "assistant" {
			continue
		}
		assistants++
		for _, b := range m.Blocks {
			if sub := callID.FindStringSubmatch(b.ID); sub != nil {
				last, _ = strconv.Atoi(sub[1])
				lastAt = assistants
			}
		}
	}
	if last < 0 {
		return -1
	}
	return last + 1 + assistants - lastAt
}
