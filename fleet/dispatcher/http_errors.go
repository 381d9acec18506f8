package dispatcher

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/api"
	"github.com/agentfleet/agentfleet/fleet/approval"

	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/store"
)

// StoreRetryAfter is the Retry-After, in seconds, of a 503 answered while
// the store is away.
const StoreRetryAfter = 2

// fail maps an error of the dispatcher or the store to a response.
func (a *handlers) fail(w http.ResponseWriter, r *http.Request, err error) {
	var (
		be  *BatchError
		fe  *fleet.FieldError
		ee  *EnqueueError
		ie  *store.InvalidError
		ptl *store.PayloadTooLargeError
	)
	switch {
	case errors.As(err, &be):
		d := api.ErrorDetail{Code: api.CodeInvalid, Message: be.Error(), Field: be.Err.Field}
		if be.Index >= 0 {
			d.Index = &be.Index
		}
		writeErr(w, http.StatusBadRequest, d)
	case errors.As(err, &fe):
		writeErr(w, http.StatusBadRequest, api.ErrorDetail{Code: api.CodeInvalid, Message: fe.Error(), Field: fe.Field})
	case errors.Is(err, store.ErrNotFound):
		writeErr(w, http.StatusNotFound, api.ErrorDetail{Code: api.CodeNotFound, Message: strings.TrimPrefix(err.Error(), "store: ")})
	case errors.Is(err, ErrTaskNotRunning), errors.Is(err, queue.ErrNotRunning):
		writeErr(w, http.StatusConflict, api.ErrorDetail{Code: api.CodeNotRunning, Message: notRunningMessage(err)})
	case errors.Is(err, queue.ErrControlRefused), errors.Is(err, ErrAlreadyFinished), errors.Is(err, store.ErrConflict),
		errors.Is(err, approval.ErrNotPending):
		writeErr(w, http.StatusConflict, api.ErrorDetail{Code: api.CodeConflict, Message: err.Error()})
	case errors.As(err, &ptl):
		writeErr(w, http.StatusRequestEntityTooLarge, api.ErrorDetail{Code: api.CodeTooLarge, Message: err.Error()})
	case errors.As(err, &ie):
		writeErr(w, http.StatusBadRequest, api.ErrorDetail{Code: api.CodeInvalid, Message: err.Error()})
	case errors.As(err, &ee):
		writeErr(w, http.StatusServiceUnavailable, api.ErrorDetail{Code: api.CodeUnavailable, Message: err.Error()})
	case store.IsRetryable(err):
		// The store is away (restarting, failing over): nothing was done
		// that a retry cannot redo, so say when to try again.
		a.health.Observe(err)
		w.Header().Set("Retry-After", strconv.Itoa(StoreRetryAfter))
		writeErr(w, http.StatusServiceUnavailable, api.ErrorDetail{Code: api.CodeUnavailable,
			Message: "the store is not answering; retry in a few seconds (" + err.Error() + ")"})
	case errors.Is(err, context.DeadlineExceeded):
		writeErr(w, http.StatusGatewayTimeout, api.ErrorDetail{Code: api.CodeTimeout, Message: err.Error()})
	case r.Context().Err() != nil:
		// The client went away; nobody reads the answer.
	default:
		a.log.Error("api request failed", "method", r.Method, "path", r.URL.Path, "err", err)
		writeErr(w, http.StatusInternalServerError, api.ErrorDetail{Code: api.CodeInternal, Message: err.Error()})
	}
}

func notRunningMessage(err error) string {
	msg := strings.TrimPrefix(err.Error(), "dispatcher: ")
	if errors.Is(err, queue.ErrNotRunning) {
		return msg + "; the task's session is not running on any worker right now (it may be between attempts): retry, or check the task's state"
	}
	return msg
}

// badRequest writes a 400 naming the field.
func badRequestf(w http.ResponseWriter, field, format string, a ...any) {
	msg := fmt.Sprintf(format, a...)
	if field != "" {
		msg = field + " " + msg
	}
	writeErr(w, http.StatusBadRequest, api.ErrorDetail{Code: api.CodeInvalid, Field: field, Message: msg})
}

// decodeBody decodes a JSON body of at most limit bytes into v, refusing
// unknown fields. root names the body in errors ("spec", "body"). It
// writes the error response and returns false on failure.
func decodeBody(w http.ResponseWriter, r *http.Request, limit int64, root string, v any) bool {
	body := http.MaxBytesReader(w, r.Body, limit)
	dec := json.NewDecoder(body)
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil && dec.More() {
		err = errors.New("has data after the JSON value")
	}
	if err == nil {
		return true
	}
	if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
		writeErr(w, http.StatusRequestEntityTooLarge, api.ErrorDetail{Code: api.CodeTooLarge, Field: root,
			Message: fmt.Sprintf("the request body is larger than %d bytes; split the submission", limit)})
		return false
	}
	field, reason := jsonErrorField(err)
	if field == "" {
		field = root
	} else {
		field = root + "." + field
	}
	badRequestf(w, field, "%s", reason)
	return false
}

// jsonErrorField turns a decoding error into a field path (relative to the
// decoded value) and a reason.
func jsonErrorField(err error) (field, reason string) {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te):
		return te.Field, fmt.Sprintf("must be a JSON %s, got %s", jsonTypeName(te.Type.Kind().String()), te.Value)
	case errors.As(err, &se):
		return "", fmt.Sprintf("is not valid JSON at byte %d: %v", se.Offset, se)
	case errors.Is(err, io.EOF):
		return "", "is empty: send a JSON object"
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "", "is truncated JSON"
	}
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
		return strings.Trim(name, `"`), "is not a known field (see docs/api.md)"
	}
	return "", strings.TrimPrefix(msg, "json: ")
}

func jsonTypeName(kind string) string {
	switch kind {
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64", "float32", "float64":
		return "number"
	case "map", "struct":
		return "object"
	case "slice", "array":
		return "array"
	case "bool":
		return "boolean"
	}
	return kind
}
