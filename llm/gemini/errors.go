package gemini

import (
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/agentfleet/agentfleet/llm"
)

// classify turns an error response into an *llm.Error as the Gemini API
// answers: a google.rpc.Status {"error": {"code", "message", "status",
// "details"}}. A body that is not one (a proxy's page) falls back to the
// HTTP status.
func classify(status int, _ http.Header, body []byte) *llm.Error {
	var doc wireErrorBody
	if json.Unmarshal(body, &doc) != nil || (doc.Error.Status == "" && doc.Error.Message == "") {
		return nil //nolint:nilerr // not an error document: the caller classifies by status
	}
	return statusError(status, doc.Error)
}

// statusError classifies a google.rpc.Status, from an error response or a
// stream's error event (status is then the code in the body).
func statusError(status int, s wireStatus) *llm.Error {
	e := &llm.Error{Provider: providerName, Status: status, Code: s.Status, Message: s.Message}
	if reason := errorReason(s); reason != "" {
		e.Code = reason
	}
	msg := strings.ToLower(s.Message)
	switch s.Status {
	case "INVALID_ARGUMENT":
		e.Kind = invalidArgumentKind(e.Code, msg)
	case "UNAUTHENTICATED":
		e.Kind = llm.ErrAuthentication
	case "PERMISSION_DENIED":
		e.Kind = llm.ErrPermission
	case "FAILED_PRECONDITION":
		// "Gemini API free tier is not available in your country. Please
		// enable billing", "User location is not supported".
		e.Kind = llm.ErrPermission
		if strings.Contains(msg, "billing") {
			e.Kind = llm.ErrQuota
		}
	case "RESOURCE_EXHAUSTED":
		e.Kind = llm.ErrRateLimited
		if quotaExhausted(s, msg) {
			e.Kind = llm.ErrQuota
		} else {
			e.RetryAfter = retryDelay(s)
		}
	case "NOT_FOUND":
		e.Kind = llm.ErrInvalidRequest
	case "UNAVAILABLE":
		e.Kind = llm.ErrOverloaded
	case "INTERNAL", "UNKNOWN", "DEADLINE_EXCEEDED", "ABORTED":
		e.Kind = llm.ErrServer
	default:
		e.Kind = llm.ClassifyStatus(status)
		if status == 0 {
			e.Kind = llm.ErrServer
		}
	}
	return e
}

// invalidArgumentKind finds what Gemini reports as a plain 400
// INVALID_ARGUMENT: a bad key (reason API_KEY_INVALID) and a prompt over the
// model's limit ("The input token count (1196265) exceeds the maximum number
// of tokens allowed (1048576).").
func invalidArgumentKind(reason, msg string) llm.ErrorKind {
	switch {
	case strings.HasPrefix(reason, "API_KEY_"), strings.Contains(msg, "api key not valid"):
		return llm.ErrAuthentication
	case strings.Contains(msg, "token count"), strings.Contains(msg, "maximum number of tokens"),
		strings.Contains(msg, "context window"), strings.Contains(msg, "too long"):
		return llm.ErrContextLength
	}
	return llm.ErrInvalidRequest
}

// errorReason is the ErrorInfo reason in the details, e.g. API_KEY_INVALID.
func errorReason(s wireStatus) string {
	for _, d := range s.Details {
		if strings.HasSuffix(d.Type, "google.rpc.ErrorInfo") && d.Reason != "" {
			return d.Reason
		}
	}
	return ""
}

// quotaExhausted tells a quota that waiting a minute will not restore (per
// day, or prepaid credits spent) from a per-minute rate limit. Both arrive as
// 429 RESOURCE_EXHAUSTED; the QuotaFailure violation names the quota.
func quotaExhausted(s wireStatus, msg string) bool {
	for _, d := range s.Details {
		for _, v := range d.Violations {
			id := strings.ToLower(v.QuotaID + " " + v.QuotaMetric)
			if strings.Contains(id, "perday") || strings.Contains(id, "per_day") {
				return true
			}
		}
	}
	return strings.Contains(msg, "per day") || strings.Contains(msg, "credits are depleted")
}

// retryDelay reads RetryInfo.retryDelay ("12s", "0.5s").
func retryDelay(s wireStatus) time.Duration {
	for _, d := range s.Details {
		if d.RetryDelay == "" {
			continue
		}
		if dur, err := time.ParseDuration(d.RetryDelay); err == nil && dur > 0 {
			return dur
		}
	}
	return 0
}
