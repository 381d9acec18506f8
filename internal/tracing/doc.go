// Package tracing sets up OpenTelemetry traces for the fleet's processes
// (the dispatcher, the worker, dev mode) and holds the few helpers the
// instrumented packages share: the span names and attribute keys, the
// W3C trace context in NATS message headers, and a log handler that adds
// the trace and span ids to every record logged with a context.
//
// Instrumented code uses the OpenTelemetry API's global tracer provider
// (otel.Tracer). Until Setup installs the SDK, that provider is the API's
// no-op one: a span costs one interface call and no allocation, so a
// process with tracing off pays nothing measurable (the dispatcher bench
// in docs/operations.md "Tracing" shows both).
//
// Decisions where the issue is silent:
//   - Tracing is on when an OTLP endpoint is configured
//     (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT)
//     and not turned off (OTEL_SDK_DISABLED=true or
//     OTEL_TRACES_EXPORTER=none). The exporter speaks OTLP over HTTP
//     (protobuf); OTEL_EXPORTER_OTLP_PROTOCOL=grpc is refused with a clear
//     error rather than silently ignored: one exporter is simpler to run
//     and test, and every collector (Jaeger, the OpenTelemetry
//     Collector) receives OTLP/HTTP on port 4318.
//   - Sampling: a new trace is kept with the operator's ratio
//     (Options.SampleRatio, default 1); a span whose parent came from
//     another process follows the parent's decision. A trace the ratio
//     dropped is still recorded in each process, and its spans are
//     exported when one of them ends with an error status (a failed
//     task), so failed tasks are always traced in every process that saw
//     the failure (see keepFailed).
//   - The trace of a task tree: the submission starts it (or continues
//     the caller's traceparent), and every message of the task and its
//     children carries it in the "Traceparent" NATS header. In a batch
//     of more than one task each task starts a trace of its own, linked
//     to the batch's span: a batch is a transport, not a unit of work.
//   - A task's trace is linked from the operator's tracing UI when the
//     dispatcher's tracing.ui_url (CheckUIURL) is set: GET
//     /v1/tasks/{id}/trace and the dashboard's timeline.
package tracing
