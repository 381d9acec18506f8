package worker_test

import (
	"context"
	"encoding/json"
	"time"

	"github.com/google/uuid"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/fleettest"
	"github.com/agentfleet/agentfleet/fleet/internal/taskops"
	"github.com/agentfleet/agentfleet/internal/testenv"
	"github.com/agentfleet/agentfleet/internal/tracing"
	"github.com/agentfleet/agentfleet/store"
)

// TestTraceOfAParkedParent: a parent that spawns a child and waits for it
// (parking) is resumed by the child's end; all of it is one trace, begun
// by the submission's span: the parent's first claim under it, the
// child's claim under the parent's spawn_agent call, and the parent's
// resumed claim a second round of the same trace that links to the span
// that woke it.
func TestTraceOfAParkedParent(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.TraceContext{})
	defer otel.SetTracerProvider(noop.NewTracerProvider())
	f := fleettest.Start(t, fleettest.Options{Workers: 1, Slots: 2})

	ctx, submit := tp.Tracer("test").Start(context.Background(), tracing.SpanSubmit)
	spec := fleettest.Spec("parked parent",
		fleettest.Step{Calls: []fleettest.Call{fleettest.Spawn("kid", fleettest.Step{Gate: "kid", Text: "kid done"})}},
		fleettest.Step{Calls: []fleettest.Call{{Name: "wait", Args: map[string]any{"agent_id": "{{agent:0}}"}}}},
		fleettest.Step{Text: "parent done"})
	spec.TraceParent = tracing.TraceParent(ctx)
	id := submitIn(t, f, ctx, spec)
	submit.End()
	f.WaitState(id, store.TaskWaiting) // parked until the kid, held at its gate, ends
	f.Model.Open("kid")
	if got := f.WaitDone(id); got.State != store.TaskSucceeded {
		t.Fatalf("parent ended %s (%s)", got.State, got.Error)
	}

	// The resumed claim's span ends once its delivery is settled, just
	// after the end is stored.
	testenv.Eventually(t, fleettest.Wait, "the resumed claim's span", func() bool {
		n := 0
		for _, s := range exp.GetSpans() {
			if s.Name == tracing.SpanClaim && attr(s, tracing.AttrTaskID) == id.String() {
				n++
			}
		}
		return n >= 2
	})
	var claims []tracetest.SpanStub
	var spawn tracetest.SpanStub
	for _, s := range exp.GetSpans() {
		if s.SpanContext.TraceID() != submit.SpanContext().TraceID() {
			continue
		}
		switch s.Name {
		case tracing.SpanClaim:
			claims = append(claims, s)
		case "execute_tool spawn_agent":
			spawn = s
		}
	}
	var parentClaims, childClaims []tracetest.SpanStub
	for _, c := range claims {
		if attr(c, tracing.AttrTaskID) == id.String() {
			parentClaims = append(parentClaims, c)
		} else {
			childClaims = append(childClaims, c)
		}
	}
	if len(parentClaims) < 2 || len(childClaims) != 1 {
		t.Fatalf("%d claims of the parent and %d of the child in the trace, want 2 or more and 1", len(parentClaims), len(childClaims))
	}
	if parentClaims[0].Parent.SpanID() != submit.SpanContext().SpanID() {
		t.Errorf("the parent's first claim is not under the submission")
	}
	if childClaims[0].Parent.SpanID() != spawn.SpanContext.SpanID() {
		t.Errorf("the child's claim is not under the spawn_agent call")
	}
	resumed := parentClaims[len(parentClaims)-1]
	if attr(resumed, tracing.AttrMsgType) != "resume" || len(resumed.Links) != 1 || resumed.Links[0].SpanContext.SpanID() != resumed.Parent.SpanID() {
		t.Errorf("the resumed claim (%s) has links %v, want one to the span that woke it (%s)", attr(resumed, tracing.AttrMsgType), resumed.Links, resumed.Parent.SpanID())
	}
}

// submitIn stores spec and publishes its start message inside ctx's span,
// as the dispatcher's Submit does.
func submitIn(t *testing.T, f *fleettest.Fleet, ctx context.Context, spec fleet.TaskSpec) uuid.UUID {
	t.Helper()
	spec = spec.WithDefaults()
	body, _ := json.Marshal(spec)
	res, err := f.Store.CreateTask(ctx, store.CreateTaskParams{Queue: spec.Queue, Spec: body})
	if err != nil {
		t.Fatal(err)
	}
	o := taskops.StartMessage(res.Task, time.Time{})
	if _, err := f.Queue.Send(ctx, o.To, o.Msg, o.MsgID); err != nil {
		t.Fatal(err)
	}
	return res.Task.ID
}

func attr(s tracetest.SpanStub, key string) string {
	for _, a := range s.Attributes {
		if string(a.Key) == key {
			return a.Value.String()
		}
	}
	return ""
}
