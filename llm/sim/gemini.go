package sim

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/agentfleet/agentfleet/llm"
)

// geminiDialect speaks the Gemini API: POST
// /v1beta/models/{model}:generateContent, and :streamGenerateContent with
// alt=sse (data-only events, each a whole GenerateContentResponse).
type geminiDialect struct{}

func init() { registerDialect(geminiDialect{}) }

func (geminiDialect) Name() string { return "gemini" }
func (geminiDialect) Match(r *http.Request) bool {
	return strings.Contains(r.URL.Path, "/models/") &&
		(hasSuffixPath(r, ":generateContent") || hasSuffixPath(r, ":streamGenerateContent"))
}

// Head reads both from the path: /v1beta/models/{model}:streamGenerateContent.
func (geminiDialect) Head(r *http.Request, _ []byte) (string, bool) {
	_, rest, _ := strings.Cut(r.URL.Path, "/models/")
	model, _, _ := strings.Cut(rest, ":")
	return model, hasSuffixPath(r, ":streamGenerateContent")
}

// geminiParts builds the parts of a reply: a thought, the text, then one
// functionCall per call. The reasoning signature goes where Gemini puts it:
// on the first function call, else on the text.
func geminiParts(rep Reply) []obj {
	var parts []obj
	if rep.Reasoning != "" {
		parts = append(parts, obj{"text": rep.Reasoning, "thought": true})
	}
	parts = append(parts, geminiServerParts(rep)...)
	if rep.Text != "" {
		parts = append(parts, obj{"text": rep.Text})
	}
	for _, tc := range rep.ToolCalls {
		call := obj{"name": tc.Name, "args": geminiArgs(tc.Arguments)}
		if tc.ID != "" {
			call["id"] = tc.ID // Gemini 3 sends ids; earlier models do not
		}
		parts = append(parts, obj{"functionCall": call})
	}
	if rep.ReasoningSignature != "" {
		signed := len(parts) - 1
		for i, p := range parts {
			if p["functionCall"] != nil {
				signed = i
				break
			}
		}
		if signed >= 0 {
			parts[signed]["thoughtSignature"] = rep.ReasoningSignature
		}
	}
	return parts
}

// geminiArgs is the arguments as a JSON value; text that is not JSON is sent
// as a string so a client sees arguments that are not an object.
func geminiArgs(args string) any {
	if args == "" {
		return obj{}
	}
	if json.Valid([]byte(args)) {
		return json.RawMessage(args)
	}
	return args
}

// geminiUsage renders usage as the API counts it: candidatesTokenCount
// excludes the thoughts.
func geminiUsage(u llm.Usage) obj {
	m := obj{
		"promptTokenCount":     u.InputTokens,
		"candidatesTokenCount": max(u.OutputTokens-u.ReasoningTokens, 0),
		"totalTokenCount":      u.InputTokens + u.OutputTokens,
	}
	if u.ReasoningTokens > 0 {
		m["thoughtsTokenCount"] = u.ReasoningTokens
	}
	if u.CacheReadTokens > 0 {
		m["cachedContentTokenCount"] = u.CacheReadTokens
	}
	return m
}

// geminiChunk is one GenerateContentResponse; finish "" leaves finishReason
// out, as in every stream chunk but the last.
func geminiChunk(rep Reply, model string, parts []obj, finish string) obj {
	cand := obj{"content": obj{"parts": parts, "role": "model"}, "index": 0}
	if finish != "" {
		cand["finishReason"] = finish
		geminiMetadata(rep, cand)
	}
	return obj{"candidates": []obj{cand}, "usageMetadata": geminiUsage(rep.Usage),
		"modelVersion": model, "responseId": rep.ID}
}

func geminiFinish(rep Reply) string { return orString(rep.FinishReason, "STOP") }

func (geminiDialect) WriteWhole(w http.ResponseWriter, rep Reply, model string) {
	rep.ID = orID(rep.ID, "resp")
	writeGeminiJSON(w, http.StatusOK, geminiChunk(rep, model, geminiParts(rep), geminiFinish(rep)))
}

// WriteStream sends the thought and the text in chunks, each function call
// in a chunk of its own, and finishReason with the last chunk.
func (geminiDialect) WriteStream(sw *StreamWriter, rep Reply, model string) {
	rep.ID = orID(rep.ID, "resp")
	parts := geminiParts(rep)
	var chunks [][]obj
	for _, p := range parts {
		text, isText := p["text"].(string)
		if !isText {
			chunks = append(chunks, []obj{p})
			continue
		}
		pieces := sw.Chunks(text)
		for i, piece := range pieces {
			c := obj{"text": piece}
			if p["thought"] != nil {
				c["thought"] = true
			}
			if i == len(pieces)-1 && p["thoughtSignature"] != nil {
				c["thoughtSignature"] = p["thoughtSignature"]
			}
			chunks = append(chunks, []obj{c})
		}
	}
	if len(chunks) == 0 {
		chunks = append(chunks, []obj{{"text": ""}})
	}
	for i, c := range chunks {
		finish := ""
		if i == len(chunks)-1 {
			finish = geminiFinish(rep)
		}
		if !sw.JSON("", geminiChunk(rep, model, c, finish)) {
			return
		}
	}
}

// geminiError is how the API reports a failure kind: HTTP status, rpc
// status, message and details.
type geminiError struct {
	status  int
	rpc     string
	message string
	details []obj
}

var geminiErrors = map[llm.ErrorKind]geminiError{
	// A bad key is a 400, told apart only by the ErrorInfo reason.
	llm.ErrAuthentication: {400, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key.", []obj{
		{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID", "domain": "googleapis.com",
			"metadata": obj{"service": "generativelanguage.googleapis.com"}},
		{"@type": "type.googleapis.com/google.rpc.LocalizedMessage", "locale": "en-US", "message": "API key not valid. Please pass a valid API key."},
	}},
	llm.ErrPermission: {403, "PERMISSION_DENIED", "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.", nil},
	// Quota and rate limit are both 429 RESOURCE_EXHAUSTED; the violated
	// quota tells a per-day limit from a per-minute one.
	llm.ErrQuota: {429, "RESOURCE_EXHAUSTED", "You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.", []obj{
		{"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": []obj{{
			"quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests",
			"quotaId":     "GenerateRequestsPerDayPerProjectPerModel-FreeTier", "quotaValue": "250"}}},
		{"@type": "type.googleapis.com/google.rpc.Help", "links": []obj{{"description": "Learn more about Gemini API quotas", "url": "https://ai.google.dev/gemini-api/docs/rate-limits"}}},
	}},
	llm.ErrRateLimited: {429, "RESOURCE_EXHAUSTED", "You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.", []obj{
		{"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": []obj{{
			"quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests",
			"quotaId":     "GenerateRequestsPerMinutePerProjectPerModel-FreeTier", "quotaValue": "10"}}},
	}},
	llm.ErrOverloaded:     {503, "UNAVAILABLE", "The model is overloaded. Please try again later.", nil},
	llm.ErrContextLength:  {400, "INVALID_ARGUMENT", "The input token count (1196265) exceeds the maximum number of tokens allowed (1048576).", nil},
	llm.ErrInvalidRequest: {400, "INVALID_ARGUMENT", "Invalid JSON payload received. Unknown name \"bogus\": Cannot find field.", nil},
	llm.ErrServer:         {500, "INTERNAL", "An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting", nil},
}

// geminiErrorBody renders f. Gemini sends no Retry-After header: a wait
// asked for in f.RetryAfter (seconds) goes into RetryInfo.retryDelay.
func geminiErrorBody(f Failure) (int, obj) {
	e, ok := geminiErrors[f.Kind]
	if !ok {
		e = geminiErrors[llm.ErrServer]
	}
	if f.Status != 0 {
		e.status = f.Status
	}
	details := append([]obj(nil), e.details...)
	if f.RetryAfter != "" {
		details = append(details, obj{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": f.RetryAfter + "s"})
	}
	body := obj{"code": e.status, "message": orString(f.Message, e.message), "status": e.rpc}
	if len(details) > 0 {
		body["details"] = details
	}
	return e.status, obj{"error": body}
}

func (geminiDialect) WriteError(w http.ResponseWriter, f Failure) {
	status, body := geminiErrorBody(f)
	if f.RetryAfterMs != "" {
		w.Header().Set("retry-after-ms", f.RetryAfterMs)
	}
	writeGeminiJSON(w, status, body)
}

func (geminiDialect) StreamError(f Failure) (string, string) {
	_, body := geminiErrorBody(f)
	b, _ := json.Marshal(body)
	return "", string(b)
}

func writeGeminiJSON(w http.ResponseWriter, status int, v obj) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
