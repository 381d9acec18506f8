package api

// TraceView answers GET /v1/tasks/{id}/trace: where the task's trace is.
// A task submitted while the dispatcher traced nothing has none (all
// fields empty). A trace that was not sampled is in the trace store only
// if the task failed (docs/operations.md "Sampling").
type TraceView struct {
	TraceID string `json:"trace_id,omitempty"` // 32 hex digits: the task tree's trace
	Sampled bool   `json:"sampled"`            // the trace was kept whatever the outcome
	// URL is the trace in the operator's tracing UI (the dispatcher's
	// tracing.ui_url with the trace id in it); "" without a UI or a trace.
	URL string `json:"url,omitempty"`
}
