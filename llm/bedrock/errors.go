package bedrock

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/agentfleet/agentfleet/llm"
)

// errorKinds maps Bedrock's error and exception types (compared without
// case) to unified kinds.
var errorKinds = map[string]llm.ErrorKind{
	"throttlingexception":           llm.ErrRateLimited,
	"servicequotaexceededexception": llm.ErrQuota,
	"serviceunavailableexception":   llm.ErrOverloaded,
	"modelnotreadyexception":        llm.ErrOverloaded,
	"internalserverexception":       llm.ErrServer,
	"modelstreamerrorexception":     llm.ErrServer,
	"modeltimeoutexception":         llm.ErrServer,
	"validationexception":           llm.ErrInvalidRequest,
	"resourcenotfoundexception":     llm.ErrInvalidRequest,
	"accessdeniedexception":         llm.ErrPermission,
	"unrecognizedclientexception":   llm.ErrAuthentication,
	"invalidsignatureexception":     llm.ErrAuthentication,
	"expiredtokenexception":         llm.ErrAuthentication,
}

type errorBody struct {
	Message string `json:"message"`
	Lower   string `json:"Message"`
}

// classify reads an error response: the type is in the X-Amzn-ErrorType
// header ("ThrottlingException:http://..."), the text in {"message"}. A
// ValidationException about the input's length is a context-length error.
func classify(status int, h http.Header, body []byte) *llm.Error {
	typ, _, _ := strings.Cut(h.Get("X-Amzn-Errortype"), ":")
	var b errorBody
	if json.Unmarshal(body, &b) != nil || (b.Message == "" && b.Lower == "" && typ == "") {
		return nil //nolint:nilerr // not an error document: the caller classifies by status
	}
	e := exceptionError(typ, body)
	e.Status = status
	if e.Kind == "" {
		e.Kind = llm.ClassifyStatus(status)
	}
	return e
}

// exceptionError is the error of an exception (an error response or an
// exception message mid-stream).
func exceptionError(typ string, payload []byte) *llm.Error {
	var b errorBody
	_ = json.Unmarshal(payload, &b)
	msg := b.Message
	if msg == "" {
		msg = b.Lower
	}
	kind := errorKinds[strings.ToLower(typ)]
	if kind == llm.ErrInvalidRequest && isContextLength(msg) {
		kind = llm.ErrContextLength
	}
	if kind == "" && typ != "" {
		kind = llm.ErrServer
	}
	return &llm.Error{Kind: kind, Provider: ProviderName, Code: typ, Message: msg}
}

func isContextLength(msg string) bool {
	m := strings.ToLower(msg)
	return strings.Contains(m, "too long") || strings.Contains(m, "too many tokens") || strings.Contains(m, "context length")
}
