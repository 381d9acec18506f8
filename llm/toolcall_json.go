package llm

import "encoding/json"

// toolCallJSON is ToolCall's wire form. Arguments that are not valid JSON
// (kept so the agent can answer with an error result) cannot travel as a
// json.RawMessage, so they travel as text in arguments_text instead.
type toolCallJSON struct {
	ID             string          `json:"id"`
	Name           string          `json:"name"`
	Arguments      json.RawMessage `json:"arguments,omitempty"`
	ArgumentsText  *string         `json:"arguments_text,omitempty"`
	ArgumentsError string          `json:"arguments_error,omitempty"`
	ItemID         string          `json:"item_id,omitempty"`
	Signature      string          `json:"signature,omitempty"`
}

// MarshalJSON encodes the call; invalid Arguments are kept as text, so a
// history holding a malformed call can always be stored and reloaded.
func (c ToolCall) MarshalJSON() ([]byte, error) {
	w := toolCallJSON{ID: c.ID, Name: c.Name, ArgumentsError: c.ArgumentsError, ItemID: c.ItemID, Signature: c.Signature}
	switch {
	case len(c.Arguments) == 0:
	case json.Valid(c.Arguments):
		w.Arguments = c.Arguments
	default:
		text := string(c.Arguments)
		w.ArgumentsText = &text
	}
	return json.Marshal(w)
}

// UnmarshalJSON decodes what MarshalJSON wrote.
func (c *ToolCall) UnmarshalJSON(data []byte) error {
	var w toolCallJSON
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	*c = ToolCall{ID: w.ID, Name: w.Name, Arguments: w.Arguments, ArgumentsError: w.ArgumentsError, ItemID: w.ItemID, Signature: w.Signature}
	if w.ArgumentsText != nil {
		c.Arguments = json.RawMessage(*w.ArgumentsText)
	}
	return nil
}
