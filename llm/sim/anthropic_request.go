package sim

import (
	"encoding/json"
	"fmt"
	"strings"
)

// AnthropicMessage is one message of a Messages API request, as simulated
// models read it: its role and its content blocks.
type AnthropicMessage struct {
	Role   string
	Blocks []AnthropicBlock
}

// AnthropicBlock is one content block; the fields a block type lacks are
// empty. Content holds a tool_result's content (a string or blocks).
type AnthropicBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
}

// ResultText is the text of a tool_result block: its content's text blocks
// joined.
func (b AnthropicBlock) ResultText() string {
	var sb strings.Builder
	for _, inner := range anthropicContent(b.Content) {
		sb.WriteString(inner.Text)
	}
	return sb.String()
}

// AnthropicMessages reads the conversation of a Messages API request body.
func AnthropicMessages(body []byte) ([]AnthropicMessage, error) {
	var req struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, fmt.Errorf("not an Anthropic Messages request: %v", err)
	}
	out := make([]AnthropicMessage, len(req.Messages))
	for i, m := range req.Messages {
		out[i] = AnthropicMessage{Role: m.Role, Blocks: anthropicContent(m.Content)}
	}
	return out, nil
}

// anthropicContent reads content that is a string or an array of blocks.
func anthropicContent(raw json.RawMessage) []AnthropicBlock {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []AnthropicBlock{{Type: "text", Text: s}}
	}
	var bs []AnthropicBlock
	_ = json.Unmarshal(raw, &bs)
	return bs
}
