package tracing_test

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/dispatcher"
	"github.com/agentfleet/agentfleet/fleet/fleettest"
	"github.com/agentfleet/agentfleet/internal/testenv"
	"github.com/agentfleet/agentfleet/internal/tracing"
	"github.com/agentfleet/agentfleet/internal/tracing/jaegertest"
	"github.com/agentfleet/agentfleet/internal/tracing/tracingtest"
	"github.com/agentfleet/agentfleet/store"
)

// TestJaegerTrace: a task submitted with a caller's traceparent spawns a
// subagent; the dispatcher (this test process) and two `worker run`
// processes export to a real Jaeger, and its query API returns one trace
// holding the submission, both tasks' queue waits, claims, sessions,
// turns, model calls and tool calls, parented across the processes: the
// parent's claim under the submission, the child's claim under the
// parent's spawn_agent call, on the other worker.
func TestJaegerTrace(t *testing.T) {
	j := jaegertest.Start(t)
	f := fleettest.Start(t, fleettest.Options{NoWorkers: true})
	if f.DSN == "" {
		testenv.SkipOrFatal(t, "needs Postgres: the worker processes share the test's store")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	// This process is the dispatcher's.
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(j.OTLP+"/v1/traces"))
	if err != nil {
		t.Fatal(err)
	}
	tp := tracingtest.Install(t, exp, tracing.Options{Service: "agentfleet-dispatcher", SampleRatio: 1})
	d, err := dispatcher.New(f.Store, f.Queue, dispatcher.Config{Logger: slog.New(slog.DiscardHandler),
		Policy: fleet.Policy{SharedRoots: []string{fleettest.SharedRoot()}}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(d.Handler(dispatcher.APIOptions{}))
	defer srv.Close()

	bin := testenv.BuildCommand(t, "worker")
	workerProcess(t, bin, f, j, "trace-w1")
	workerProcess(t, bin, f, j, "trace-w2")

	// The parent's last model call waits at a gate, holding its worker's
	// one session slot, so the child runs on the other worker.
	spec := fleettest.Spec("traced parent",
		fleettest.Step{Calls: []fleettest.Call{fleettest.Spawn("traced child",
			fleettest.Step{Calls: []fleettest.Call{fleettest.Shell("echo child")}}, fleettest.Step{Text: "child done"})}},
		fleettest.Step{Gate: "parent-end", Text: "parent got {{results}}"})
	spec.Environment = fleet.Environment{Kind: fleet.EnvLocal, WorkingDir: fleettest.SharedDir(t), Shared: true}
	traceID, callerSpan := randomHex(16), randomHex(8)
	parent := submit(t, srv.URL, spec, "00-"+traceID+"-"+callerSpan+"-01")

	select {
	case <-f.Model.Arrived("parent-end"):
	case <-ctx.Done():
		t.Fatal("the parent never reached its last model call")
	}
	child := waitChildDone(t, f, parent)
	f.Model.Open("parent-end")
	if got := f.WaitDone(parent); got.State != store.TaskSucceeded {
		t.Fatalf("parent ended %s (%s)", got.State, got.Error)
	}
	if err := tp.ForceFlush(ctx); err != nil {
		t.Fatal(err)
	}

	var tr jaegertest.Trace
	testenv.EventuallyErr(t, time.Minute, "the whole trace in Jaeger", func() error {
		got, found, err := j.Trace(ctx, traceID)
		if err != nil || !found {
			return fmt.Errorf("not found yet (%v)", err)
		}
		tr = got
		return complete(tr, parent, child)
	})
	checkTree(t, tr, callerSpan, parent, child)
}

// complete says what the trace still lacks: each task's claim and
// session span, and the spans of three processes.
func complete(tr jaegertest.Trace, parent, child uuid.UUID) error {
	for _, id := range []uuid.UUID{parent, child} {
		for _, name := range []string{tracing.SpanClaim, tracing.SpanSession} {
			if len(tr.SpansOf(name, id.String())) == 0 {
				return fmt.Errorf("no %s span of task %s yet (%d spans)", name, id, len(tr.Spans))
			}
		}
	}
	if len(spansNamed(tr, tracing.SpanSubmit)) != 1 {
		return fmt.Errorf("no submission span yet")
	}
	return nil
}

func checkTree(t *testing.T, tr jaegertest.Trace, callerSpan string, parent, child uuid.UUID) {
	t.Helper()
	byID := tr.ByID()
	submitSpan := spansNamed(tr, tracing.SpanSubmit)[0]
	if submitSpan.Parent() != callerSpan {
		t.Errorf("the submission's parent is %q, want the caller's span %s", submitSpan.Parent(), callerSpan)
	}
	if svc := tr.Processes[submitSpan.ProcessID].ServiceName; svc != "agentfleet-dispatcher" {
		t.Errorf("the submission comes from %q, want agentfleet-dispatcher", svc)
	}
	pClaim := tr.SpansOf(tracing.SpanClaim, parent.String())[0]
	if pClaim.Parent() != submitSpan.SpanID {
		t.Errorf("the parent's first claim is under %q, want the submission %s", pClaim.Parent(), submitSpan.SpanID)
	}
	if w := tr.SpansOf(tracing.SpanQueueWait, parent.String()); len(w) == 0 || w[0].Parent() != submitSpan.SpanID {
		t.Errorf("the parent's queue wait is missing or not under the submission: %+v", w)
	}
	spawn := spanUnder(t, tr, byID, "execute_tool spawn_agent", parent)
	cClaim := tr.SpansOf(tracing.SpanClaim, child.String())[0]
	if cClaim.Parent() != spawn.SpanID {
		t.Errorf("the child's claim is under %q, want the parent's spawn_agent call %s", cClaim.Parent(), spawn.SpanID)
	}
	if a, b := pClaim.Tag(tracing.AttrWorker), cClaim.Tag(tracing.AttrWorker); a == b || a == "" || b == "" {
		t.Errorf("parent on worker %q, child on %q: want two workers", a, b)
	}
	for _, s := range []jaegertest.Span{pClaim, cClaim} {
		if svc := tr.Processes[s.ProcessID].ServiceName; svc != "agentfleet-worker" {
			t.Errorf("a claim comes from %q, want agentfleet-worker", svc)
		}
	}
	for _, id := range []uuid.UUID{parent, child} {
		chat := spanUnder(t, tr, byID, "chat claude-test", id)
		if chat.Tag("gen_ai.request.model") != "claude-test" || chat.Tag("gen_ai.system") != "anthropic" ||
			chat.Tag("gen_ai.usage.input_tokens") == "" {
			t.Errorf("task %s's model call lacks the GenAI attributes: %+v", id, chat.Tags)
		}
		if turn := byID[chat.Parent()]; turn.OperationName != tracing.SpanTurn {
			t.Errorf("task %s's model call is under %q, want %s", id, turn.OperationName, tracing.SpanTurn)
		}
	}
	shell := spanUnder(t, tr, byID, "execute_tool shell", child)
	if shell.Tag("agentfleet.tool.exit_code") != "0" || shell.Tag("agentfleet.tool.output_bytes") == "" {
		t.Errorf("the child's shell call lacks its exit code or output size: %+v", shell.Tags)
	}
	if shell.Tag("gen_ai.tool.call.arguments") != "" || shell.Tag("gen_ai.tool.call.result") != "" {
		t.Errorf("the shell call's span carries its arguments or output, which is off by default: %+v", shell.Tags)
	}
	if len(tr.Processes) != 3 {
		t.Errorf("the trace has spans of %d processes, want 3 (the dispatcher, two workers)", len(tr.Processes))
	}
	t.Logf("trace %s: %d spans from %d processes\n%s", tr.TraceID, len(tr.Spans), len(tr.Processes), render(tr, byID))
}

// render draws the trace as an indented tree, each span with its process.
func render(tr jaegertest.Trace, byID map[string]jaegertest.Span) string {
	kids := map[string][]jaegertest.Span{}
	var roots []jaegertest.Span
	spans := slices.Clone(tr.Spans)
	slices.SortFunc(spans, func(a, b jaegertest.Span) int { return cmp.Compare(a.StartTime, b.StartTime) })
	for _, s := range spans {
		if _, ok := byID[s.Parent()]; ok {
			kids[s.Parent()] = append(kids[s.Parent()], s)
		} else {
			roots = append(roots, s)
		}
	}
	var b strings.Builder
	var draw func(s jaegertest.Span, depth int)
	draw = func(s jaegertest.Span, depth int) {
		p := tr.Processes[s.ProcessID]
		inst := ""
		for _, tag := range p.Tags {
			if tag.Key == "service.instance.id" {
				inst = fmt.Sprint(tag.Value)
			}
		}
		fmt.Fprintf(&b, "%s%s  [%s %s]\n", strings.Repeat("  ", depth), s.OperationName, p.ServiceName, inst)
		for _, k := range kids[s.SpanID] {
			draw(k, depth+1)
		}
	}
	for _, r := range roots {
		draw(r, 0)
	}
	return b.String()
}

// spanUnder finds the span named name whose ancestors include task id's
// session span.
func spanUnder(t *testing.T, tr jaegertest.Trace, byID map[string]jaegertest.Span, name string, task uuid.UUID) jaegertest.Span {
	t.Helper()
	sessions := map[string]bool{}
	for _, s := range tr.SpansOf(tracing.SpanSession, task.String()) {
		sessions[s.SpanID] = true
	}
	for _, s := range spansNamed(tr, name) {
		for p := s.Parent(); p != ""; p = byID[p].Parent() {
			if sessions[p] {
				return s
			}
		}
	}
	t.Fatalf("no %q span under the session of task %s", name, task)
	return jaegertest.Span{}
}

func spansNamed(tr jaegertest.Trace, name string) []jaegertest.Span {
	var out []jaegertest.Span
	for _, s := range tr.Spans {
		if s.OperationName == name {
			out = append(out, s)
		}
	}
	return out
}

func submit(t *testing.T, url string, spec fleet.TaskSpec, traceparent string) uuid.UUID {
	t.Helper()
	body, _ := json.Marshal(spec)
	req, _ := http.NewRequest(http.MethodPost, url+"/v1/tasks", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("traceparent", traceparent)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	var out struct {
		Task struct {
			ID uuid.UUID `json:"id"`
		} `json:"task"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("submit: %s %v", resp.Status, err)
	}
	return out.Task.ID
}

func waitChildDone(t *testing.T, f *fleettest.Fleet, parent uuid.UUID) uuid.UUID {
	t.Helper()
	var child uuid.UUID
	testenv.EventuallyErr(t, time.Minute, "the subagent's end", func() error {
		res, err := f.Store.Children(context.Background(), store.ChildrenParams{ParentID: parent})
		if err != nil || len(res.Children) != 1 {
			return fmt.Errorf("children: %v (%d)", err, len(res.Children))
		}
		child = res.Children[0].ID
		if s := res.Children[0].State; s != store.TaskSucceeded {
			return fmt.Errorf("child is %s", s)
		}
		return nil
	})
	return child
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// workerProcess starts `worker run` with one session slot, exporting its
// spans to j.
func workerProcess(t *testing.T, bin string, f *fleettest.Fleet, j *jaegertest.Jaeger, id string) {
	t.Helper()
	cfg := fmt.Sprintf(`
nats: {url: %q, ack_wait: 5s}
database_url: %q
listen: "off"
log_format: text
log_level: debug
worker_id: %s
sessions: 1
workspace_root: %q
heartbeat_interval: 200ms
stale_after: 2s
drain_grace: 100ms
sandbox: auto
policy: {shared_roots: [%q]}
providers:
  anthropic: {api_key: test-key, base_url: %q, default_model: claude-test}
`, f.NATS.URL, f.DSN, id, filepath.Join(t.TempDir(), "ws"), fleettest.SharedRoot(), f.Model.URL())
	path := filepath.Join(t.TempDir(), "worker.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "run", "--config", path)
	cmd.Env = append(os.Environ(), "OTEL_EXPORTER_OTLP_ENDPOINT="+j.OTLP, "OTEL_BSP_SCHEDULE_DELAY=100")
	var logs strings.Builder
	var mu sync.Mutex
	cmd.Stderr = writerFunc(func(p []byte) (int, error) { mu.Lock(); defer mu.Unlock(); return logs.Write(p) })
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			mu.Lock()
			t.Logf("worker %s log:\n%s", id, logs.String())
			mu.Unlock()
		}
	})
}

type writerFunc func([]byte) (int, error)

func (w writerFunc) Write(p []byte) (int, error) { return w(p) }
