package llm

import (
	"encoding/json"
	"strings"
)

// ParseToolArguments turns the argument text a model produced into the
// ToolCall fields. Empty text means no arguments and becomes {}. Text that is
// not valid JSON is kept as it was, and the second result says what is wrong
// with it (for ToolCall.ArgumentsError), so the agent can answer the call
// with an error result instead of failing the turn.
func ParseToolArguments(text string) (json.RawMessage, string) {
	if strings.TrimSpace(text) == "" {
		return json.RawMessage("{}"), ""
	}
	if json.Valid([]byte(text)) {
		return json.RawMessage(text), ""
	}
	var v any
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		return json.RawMessage(text), "the tool arguments are not valid JSON (" + err.Error() + "); send a JSON object matching the tool's schema"
	}
	return json.RawMessage(text), ""
}
