package tracing

import (
	"strings"
	"testing"
)

// TestUIURL: a template must be an absolute http(s) URL with {trace_id};
// the trace id and sampled flag come from a traceparent, and anything
// else gives no id and so no link.
func TestUIURL(t *testing.T) {
	for _, bad := range []string{"https://jaeger.example.com/trace/", "/trace/{trace_id}", "ftp://x/{trace_id}", "javascript:alert(1)//{trace_id}"} {
		if err := CheckUIURL(bad); err == nil {
			t.Errorf("CheckUIURL(%q) accepted it", bad)
		}
	}
	if err := CheckUIURL("https://jaeger.example.com/trace/{trace_id}"); err != nil {
		t.Errorf("a good template: %v", err)
	}
	if err := CheckUIURL(""); err != nil {
		t.Errorf("no template: %v", err)
	}
	const id = "4bf92f3577b34da6a3ce929d0e0e4736"
	for tp, want := range map[string]struct {
		id      string
		sampled bool
	}{
		"00-" + id + "-00f067aa0ba902b7-01": {id, true},
		"00-" + id + "-00f067aa0ba902b7-00": {id, false},
		"00-" + id + "-00f067aa0ba902b7-03": {id, true},
		"":                                  {"", false},
		"00-" + strings.ToUpper(id) + "-00f067aa0ba902b7-01": {"", false},
		"00-<script>-00f067aa0ba902b7-01":                    {"", false},
	} {
		got, sampled := TraceIDOf(tp)
		if got != want.id || sampled != want.sampled {
			t.Errorf("TraceIDOf(%q) = %q %v, want %q %v", tp, got, sampled, want.id, want.sampled)
		}
	}
	if got := UIURL("https://j/trace/{trace_id}", id); got != "https://j/trace/"+id {
		t.Errorf("UIURL: %q", got)
	}
	if UIURL("", id) != "" || UIURL("https://j/{trace_id}", "") != "" {
		t.Error("UIURL without a template or an id gave a link")
	}
}
