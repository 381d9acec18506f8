package tracing

import (
	"fmt"
	"net/url"
	"strings"
)

// TraceIDPlaceholder is what a tracing UI URL template (the dispatcher's
// tracing.ui_url) holds where a trace's id goes.
const TraceIDPlaceholder = "{trace_id}"

// CheckUIURL reports what is wrong with template, a link to one trace in
// the operator's tracing UI such as
// "https://jaeger.example.com/trace/{trace_id}": it must be an absolute
// http or https URL holding TraceIDPlaceholder. "" (no UI) is valid.
func CheckUIURL(template string) error {
	if template == "" {
		return nil
	}
	if !strings.Contains(template, TraceIDPlaceholder) {
		return fmt.Errorf("tracing.ui_url %q has no %s; give the URL of one trace in your tracing UI, e.g. https://jaeger.example.com/trace/%s",
			template, TraceIDPlaceholder, TraceIDPlaceholder)
	}
	u, err := url.Parse(strings.ReplaceAll(template, TraceIDPlaceholder, "0"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("tracing.ui_url %q is not an absolute http:// or https:// URL", template)
	}
	return nil
}

// TraceIDOf is the trace id of traceparent, a W3C trace context
// ("00-<32 hex>-<16 hex>-<flags>"), and whether the trace was sampled;
// "" when traceparent is not one.
func TraceIDOf(traceparent string) (id string, sampled bool) {
	parts := strings.Split(traceparent, "-")
	if len(parts) != 4 || len(parts[1]) != 32 || !isHex(parts[1]) || len(parts[3]) != 2 || !isHex(parts[3]) {
		return "", false
	}
	flags := parts[3]
	return parts[1], strings.ContainsAny(flags[1:], "13579bdf") // bit 0: sampled
}

// UIURL is template with traceID in place of TraceIDPlaceholder ("" when
// either is empty).
func UIURL(template, traceID string) string {
	if template == "" || traceID == "" {
		return ""
	}
	return strings.ReplaceAll(template, TraceIDPlaceholder, traceID)
}

func isHex(s string) bool {
	for _, c := range s {
		if !strings.ContainsRune("0123456789abcdef", c) {
			return false
		}
	}
	return true
}
