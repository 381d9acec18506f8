package dashboard_test

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/dev"
	"github.com/agentfleet/agentfleet/internal/testenv"
	"github.com/agentfleet/agentfleet/internal/tracing"
	"github.com/agentfleet/agentfleet/internal/tracing/tracingtest"
	"github.com/agentfleet/agentfleet/store"
)

// TestTimelineLinksTheTrace: with tracing on and a tracing UI configured
// (dev.Config.TraceUIURL, the dispatcher's tracing.ui_url), a task's
// Timeline tab links its trace in that UI, and the link's trace id is
// the one the fleet's spans of the task were recorded in.
func TestTimelineLinksTheTrace(t *testing.T) {
	bin := chromium(t)
	exp := tracetest.NewInMemoryExporter()
	tp := tracingtest.Install(t, exp, tracing.Options{Service: "agentfleet-dev", SampleRatio: 1})

	const ui = "https://tracing.example/trace/{trace_id}?from=agentfleet"
	fl := startDev(t, dev.Config{Plan: browserPlan(), TraceUIURL: ui})
	c, err := fl.Client()
	if err != nil {
		t.Fatal(err)
	}
	bg := context.Background()
	sub, err := c.Submit(bg, fleet.TaskSpec{Prompt: "browser-hello: run a command"})
	if err != nil {
		t.Fatal(err)
	}
	id := sub.Task.ID
	testenv.Eventually(t, browserWait, "the task's success", func() bool {
		got, err := c.Get(bg, id)
		return err == nil && got.State == store.TaskSucceeded
	})
	if err := tp.ForceFlush(bg); err != nil {
		t.Fatal(err)
	}
	var traceID string
	for _, s := range exp.GetSpans() {
		for _, a := range s.Attributes {
			if s.Name == tracing.SpanSubmit && string(a.Key) == tracing.AttrTaskID && a.Value.AsString() == id.String() {
				traceID = s.SpanContext.TraceID().String()
			}
		}
	}
	if traceID == "" {
		t.Fatalf("no %s span of task %s among the %d exported", tracing.SpanSubmit, id, len(exp.GetSpans()))
	}
	want := strings.ReplaceAll(ui, tracing.TraceIDPlaceholder, traceID)
	if tv, err := c.Trace(bg, id); err != nil || tv.TraceID != traceID || !tv.Sampled || tv.URL != want {
		t.Fatalf("GET /v1/tasks/{id}/trace: %+v (%v), want trace %s, sampled, at %s", tv, err, traceID, want)
	}

	ctx := newBrowser(t, bin)
	if err := chromedp.Do(ctx,
		chromedp.Navigate(fl.DashboardURL()),
		chromedp.WaitVisible(css(`#counts .count[data-state="all"]`)),
		void(chromedp.Evaluate[string](`location.hash = "task=`+id.String()+`"`)),
		chromedp.WaitVisible(css(`#detail[data-state="succeeded"]`)),
		chromedp.Click(css(`.tab[data-tab="timeline"]`)),
		chromedp.WaitVisible(css(`#timeline .trace-link a`)),
		until(`document.querySelectorAll('#timeline g.tl-row').length >= 3`),
	); err != nil {
		t.Fatalf("open the task's timeline: %v", err)
	}
	href, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('#timeline .trace-link a').href`))
	if err != nil {
		t.Fatal(err)
	}
	if href != want {
		t.Errorf("the timeline links %q, want the task's trace %q", href, want)
	}
	saveScreenshot(t, ctx, "dashboard-timeline-trace.png")
}
