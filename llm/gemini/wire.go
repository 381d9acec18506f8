package gemini

import "encoding/json"

// This file holds the generateContent wire types.

// wireRequest is the body of models/{model}:generateContent and
// :streamGenerateContent.
type wireRequest struct {
	Contents          []wireContent     `json:"contents"`
	SystemInstruction *wireContent      `json:"systemInstruction,omitempty"`
	Tools             []wireTool        `json:"tools,omitempty"`
	ToolConfig        *wireToolConfig   `json:"toolConfig,omitempty"`
	GenerationConfig  *wireGenConfig    `json:"generationConfig,omitempty"`
	SafetySettings    []json.RawMessage `json:"safetySettings,omitempty"`
}

// wireContent is one turn. Each element of Parts is one of the part types
// below.
type wireContent struct {
	Parts []any  `json:"parts"`
	Role  string `json:"role,omitempty"`
}

type textPart struct {
	Text             string `json:"text"`
	Thought          bool   `json:"thought,omitempty"`
	ThoughtSignature string `json:"thoughtSignature,omitempty"`
}

type inlineDataPart struct {
	InlineData wireBlob `json:"inlineData"`
}

type fileDataPart struct {
	FileData wireFileData `json:"fileData"`
}

type wireBlob struct {
	MimeType string `json:"mimeType"`
	Data     []byte `json:"data"` // base64 on the wire
}

type wireFileData struct {
	MimeType string `json:"mimeType,omitempty"`
	FileURI  string `json:"fileUri"`
}

type functionCallPart struct {
	FunctionCall     wireFunctionCall `json:"functionCall"`
	ThoughtSignature string           `json:"thoughtSignature,omitempty"`
}

type wireFunctionCall struct {
	ID   string          `json:"id,omitempty"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args,omitempty"`
}

type functionResponsePart struct {
	FunctionResponse wireFunctionResponse `json:"functionResponse"`
}

type wireFunctionResponse struct {
	ID       string         `json:"id,omitempty"`
	Name     string         `json:"name"`
	Response map[string]any `json:"response"`
}

type wireTool struct {
	FunctionDeclarations []wireFunctionDeclaration `json:"functionDeclarations"`
	// Builtin is a built-in tool instead: {"googleSearch": {...}}.
	Builtin map[string]any `json:"-"`
}

// MarshalJSON writes function declarations, or a built-in tool.
func (t wireTool) MarshalJSON() ([]byte, error) {
	if t.Builtin != nil {
		return json.Marshal(t.Builtin)
	}
	type plain wireTool
	return json.Marshal(plain(t))
}

type wireFunctionDeclaration struct {
	Name        string         `json:"name"`
	Description string         `json:"description,omitempty"`
	Parameters  map[string]any `json:"parameters,omitempty"`
}

type wireToolConfig struct {
	FunctionCallingConfig wireFunctionCallingConfig `json:"functionCallingConfig"`
}

type wireFunctionCallingConfig struct {
	Mode                 string   `json:"mode"` // AUTO, ANY, NONE
	AllowedFunctionNames []string `json:"allowedFunctionNames,omitempty"`
}

type wireGenConfig struct {
	MaxOutputTokens int                 `json:"maxOutputTokens,omitempty"`
	Temperature     *float64            `json:"temperature,omitempty"`
	ThinkingConfig  *wireThinkingConfig `json:"thinkingConfig,omitempty"`
	// ResponseMimeType is application/json when ResponseJSONSchema is set.
	ResponseMimeType   string          `json:"responseMimeType,omitempty"`
	ResponseJSONSchema json.RawMessage `json:"responseJsonSchema,omitempty"`
}

type wireThinkingConfig struct {
	IncludeThoughts bool   `json:"includeThoughts,omitempty"`
	ThinkingBudget  *int   `json:"thinkingBudget,omitempty"`
	ThinkingLevel   string `json:"thinkingLevel,omitempty"`
}

// wireResponse is a GenerateContentResponse: the whole answer, or one chunk
// of a stream. Error is set on an error event in a stream.
type wireResponse struct {
	Candidates     []wireCandidate     `json:"candidates"`
	PromptFeedback *wirePromptFeedback `json:"promptFeedback"`
	UsageMetadata  *wireUsage          `json:"usageMetadata"`
	ModelVersion   string              `json:"modelVersion"`
	ResponseID     string              `json:"responseId"`
	Error          *wireStatus         `json:"error"`
}

type wireCandidate struct {
	Content       wireContentIn `json:"content"`
	FinishReason  string        `json:"finishReason"`
	FinishMessage string        `json:"finishMessage"`
	Index         int           `json:"index"`
	// What google_search and url_context found: the queries and pages
	// (groundingMetadata), the URLs fetched (urlContextMetadata).
	GroundingMetadata  json.RawMessage `json:"groundingMetadata"`
	URLContextMetadata json.RawMessage `json:"urlContextMetadata"`
}

type wireContentIn struct {
	Parts []wirePartIn `json:"parts"`
	Role  string       `json:"role"`
}

// wirePartIn is any part the API returns.
type wirePartIn struct {
	Text             string            `json:"text"`
	Thought          bool              `json:"thought"`
	ThoughtSignature string            `json:"thoughtSignature"`
	FunctionCall     *wireFunctionCall `json:"functionCall"`
	// Code the model wrote and ran with the code_execution tool.
	ExecutableCode      json.RawMessage `json:"executableCode"`
	CodeExecutionResult json.RawMessage `json:"codeExecutionResult"`
}

type wirePromptFeedback struct {
	BlockReason        string `json:"blockReason"`
	BlockReasonMessage string `json:"blockReasonMessage"`
}

type wireUsage struct {
	PromptTokenCount        int `json:"promptTokenCount"`
	CandidatesTokenCount    int `json:"candidatesTokenCount"`
	ThoughtsTokenCount      int `json:"thoughtsTokenCount"`
	CachedContentTokenCount int `json:"cachedContentTokenCount"`
	ToolUsePromptTokenCount int `json:"toolUsePromptTokenCount"`
}

// wireErrorBody is the body of an error response: a google.rpc.Status.
type wireErrorBody struct {
	Error wireStatus `json:"error"`
}

type wireStatus struct {
	Code    int               `json:"code"`
	Message string            `json:"message"`
	Status  string            `json:"status"`
	Details []wireErrorDetail `json:"details"`
}

// wireErrorDetail merges the detail types we read: ErrorInfo (reason),
// QuotaFailure (violations) and RetryInfo (retryDelay).
type wireErrorDetail struct {
	Type       string `json:"@type"`
	Reason     string `json:"reason"`
	RetryDelay string `json:"retryDelay"`
	Violations []struct {
		QuotaMetric string `json:"quotaMetric"`
		QuotaID     string `json:"quotaId"`
	} `json:"violations"`
}
