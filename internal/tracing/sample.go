package tracing

import (
	"context"
	"sync"
	"time"

	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// newSampler keeps a new trace with probability ratio and follows a
// parent's decision, but records (without sampling) every span it does
// not keep, so keepFailed can still export a trace that fails.
func newSampler(ratio float64) sdktrace.Sampler {
	return sampler{ratio: sdktrace.TraceIDRatioBased(ratio)}
}

type sampler struct{ ratio sdktrace.Sampler }

func (s sampler) ShouldSample(p sdktrace.SamplingParameters) sdktrace.SamplingResult {
	psc := trace.SpanContextFromContext(p.ParentContext)
	var keep bool
	if psc.IsValid() {
		keep = psc.IsSampled()
	} else {
		keep = s.ratio.ShouldSample(p).Decision == sdktrace.RecordAndSample
	}
	d := sdktrace.RecordOnly
	if keep {
		d = sdktrace.RecordAndSample
	}
	return sdktrace.SamplingResult{Decision: d, Tracestate: psc.TraceState()}
}

func (s sampler) Description() string {
	return "agentfleet{" + s.ratio.Description() + ",failed:always}"
}

// Bounds of the spans keepFailed holds for traces not sampled.
const (
	maxHeldTraces   = 512
	maxSpansPerHeld = 2048
)

// keepFailed passes sampled spans to next and holds the spans of traces
// the sampler did not keep, per trace, until the trace's local root span
// ends in this process: if any of them ended with an error status they
// are exported, else dropped. Once a trace failed, its later spans here
// are exported as they end. Memory is bounded: past maxHeldTraces the
// oldest held trace is dropped.
type keepFailed struct {
	next sdktrace.SpanProcessor
	exp  sdktrace.SpanExporter

	mu     sync.Mutex
	held   map[trace.TraceID][]sdktrace.ReadOnlySpan
	order  []trace.TraceID
	failed map[trace.TraceID]bool
}

func newKeepFailed(next sdktrace.SpanProcessor, exp sdktrace.SpanExporter) *keepFailed {
	return &keepFailed{next: next, exp: exp, held: map[trace.TraceID][]sdktrace.ReadOnlySpan{}, failed: map[trace.TraceID]bool{}}
}

func (k *keepFailed) OnStart(ctx context.Context, s sdktrace.ReadWriteSpan) { k.next.OnStart(ctx, s) }

func (k *keepFailed) OnEnd(s sdktrace.ReadOnlySpan) {
	if s.SpanContext().IsSampled() {
		k.next.OnEnd(s)
		return
	}
	if out := k.hold(s); len(out) > 0 {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = k.exp.ExportSpans(ctx, out) // best effort, as the batch exporter's are
	}
}

// hold files s under its trace and returns the spans to export now.
func (k *keepFailed) hold(s sdktrace.ReadOnlySpan) []sdktrace.ReadOnlySpan {
	id := s.SpanContext().TraceID()
	localRoot := !s.Parent().IsValid() || s.Parent().IsRemote()
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.failed[id] {
		if localRoot {
			delete(k.failed, id)
		}
		return []sdktrace.ReadOnlySpan{s}
	}
	spans, known := k.held[id]
	if !known {
		k.order = append(k.order, id)
		if len(k.order) > maxHeldTraces {
			delete(k.held, k.order[0])
			k.order = k.order[1:]
		}
	}
	if len(spans) < maxSpansPerHeld {
		spans = append(spans, s)
	}
	k.held[id] = spans
	if s.Status().Code == codes.Error {
		k.forget(id)
		if !localRoot {
			k.failed[id] = true
		}
		return spans
	}
	if localRoot {
		k.forget(id)
	}
	return nil
}

// forget drops the held spans of trace id.
func (k *keepFailed) forget(id trace.TraceID) {
	delete(k.held, id)
	for i, o := range k.order {
		if o == id {
			k.order = append(k.order[:i], k.order[i+1:]...)
			break
		}
	}
}

func (k *keepFailed) Shutdown(ctx context.Context) error   { return k.next.Shutdown(ctx) }
func (k *keepFailed) ForceFlush(ctx context.Context) error { return k.next.ForceFlush(ctx) }
