package chatcompat

import (
	"encoding/json"

	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/llm/openai"
)

// bodyError classifies an error object found in a 200 body or a stream
// chunk (OpenRouter and vLLM report failures mid-stream this way). The
// OpenAI rules apply; a numeric code (OpenRouter) is read as the HTTP status
// it names.
func bodyError(message, typ string, code any) *llm.Error {
	doc, _ := json.Marshal(map[string]any{"error": map[string]any{"message": message, "type": typ, "code": code}})
	status := 0
	if f, ok := code.(float64); ok && f >= 400 && f < 600 {
		status = int(f)
	}
	e := openai.ClassifyError(status, nil, doc)
	e.Provider = ProviderName
	if e.Kind == llm.ErrInvalidResponse { // no status to fall back on
		e.Kind = llm.ErrServer
	}
	return e
}
