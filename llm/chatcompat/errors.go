package chatcompat

import (
	"encoding/json"

	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/llm/openai"
)

// bodyError classifies an error object found in a 200 body or a stream
// chunk (OpenRouter and vLLM report failures mid-stream this way). The
// OpenAI rules apply, without an HTTP status.
func bodyError(message, typ string, code any) *llm.Error {
	doc, _ := json.Marshal(map[string]any{"error": map[string]any{"message": message, "type": typ, "code": code}})
	e := openai.ClassifyError(0, nil, doc)
	e.Provider = ProviderName
	e.Status = 0
	if e.Kind == llm.ErrInvalidResponse { // no status to fall back on
		e.Kind = llm.ErrServer
	}
	return e
}
