package dev_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"

	"github.com/agentfleet/agentfleet/fleet/api"
	"github.com/agentfleet/agentfleet/fleet/client"
	"github.com/agentfleet/agentfleet/fleet/dev"
	"github.com/agentfleet/agentfleet/internal/testenv"
	"github.com/agentfleet/agentfleet/internal/tracing"
	"github.com/agentfleet/agentfleet/internal/tracing/jaegertest"
	"github.com/agentfleet/agentfleet/internal/tracing/tracingtest"
)

// TestDemoBacklogTrace runs the demo backlog (examples/demo, submitted as
// one batch) on dev mode exporting to a real Jaeger, and reads back from
// Jaeger's query API one trace per task tree: each of the four roots has
// a trace of its own, holding its submission, and for every task of its
// tree (the fan-out task's subagents included) its claims and sessions
// and one model-call span per model call the task's sessions stored
// (assistant turns), each under that task's own session; a subagent's
// claim is under its parent's spawn_agent call. The logs of the workers'
// runs carry each trace's id.
func TestDemoBacklogTrace(t *testing.T) {
	j := jaegertest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(j.OTLP+"/v1/traces"))
	if err != nil {
		t.Fatal(err)
	}
	tp := tracingtest.Install(t, exp, tracing.Options{Service: "agentfleet-dev", SampleRatio: 1})

	dir := demoDir(t)
	plan, err := dev.LoadDemoPlan(dir)
	if err != nil {
		t.Fatal(err)
	}
	var logs lockedBuffer
	log := slog.New(tracing.LogHandler(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	fl := startDev(t, dev.Config{Plan: plan, Logger: log})
	c, err := fl.Client()
	if err != nil {
		t.Fatal(err)
	}
	res, err := dev.RunDemo(ctx, c, dev.DemoOptions{Dir: dir, Out: io.Discard, Poll: 100 * time.Millisecond})
	if err != nil || res.Failed() != 0 || len(res.Roots) != 4 || len(res.Tasks) != 6 {
		t.Fatalf("the demo backlog: %v; %d roots, %d tasks, %d failed; want 4 roots and 2 subagents, all succeeded",
			err, len(res.Roots), len(res.Tasks), res.Failed())
	}
	if err := tp.ForceFlush(ctx); err != nil {
		t.Fatal(err)
	}

	calls := modelCalls(ctx, t, c, res.Tasks)
	traces := map[string]uuid.UUID{} // trace id -> root
	for _, root := range res.Roots {
		tv, err := c.Trace(ctx, root.ID)
		if err != nil || tv.TraceID == "" || !tv.Sampled {
			t.Fatalf("root %s: trace %+v (%v), want a sampled one", root.ID, tv, err)
		}
		if other, dup := traces[tv.TraceID]; dup {
			t.Fatalf("roots %s and %s share trace %s; want one trace per task tree", other, root.ID, tv.TraceID)
		}
		traces[tv.TraceID] = root.ID
	}
	for traceID, root := range traces {
		var tree []api.TaskView
		for _, task := range res.Tasks {
			if task.RootID == root {
				tree = append(tree, task)
			}
		}
		var tr jaegertest.Trace
		testenv.EventuallyErr(t, time.Minute, "the trace of root "+root.String()+" in Jaeger", func() error {
			got, found, err := j.Trace(ctx, traceID)
			if err != nil || !found {
				return fmt.Errorf("not found yet (%v)", err)
			}
			tr = got
			return treeComplete(tr, root, tree, calls)
		})
		checkSubagents(t, tr, tree)
		t.Logf("trace %s of root %s: %d spans, %d tasks", traceID, root, len(tr.Spans), len(tree))
	}
	checkLogs(t, logs.String(), traces)
}

// checkLogs: every log line of a task's run (it names root_task_id) carries
// the trace of that root and a span id, and there is at least one (the
// fan-out task logs its parking).
func checkLogs(t *testing.T, logs string, traces map[string]uuid.UUID) {
	t.Helper()
	want := map[string]string{} // root -> trace
	for id, root := range traces {
		want[root.String()] = id
	}
	n := 0
	for line := range strings.SplitSeq(strings.TrimSpace(logs), "\n") {
		var rec struct {
			Msg     string `json:"msg"`
			Root    string `json:"root_task_id"`
			TraceID string `json:"trace_id"`
			SpanID  string `json:"span_id"`
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil || rec.Root == "" {
			continue
		}
		n++
		if rec.TraceID != want[rec.Root] || len(rec.SpanID) != 16 {
			t.Errorf("log line %q of root %s carries trace %q span %q, want trace %s and a span", rec.Msg, rec.Root, rec.TraceID, rec.SpanID, want[rec.Root])
		}
	}
	if n == 0 {
		t.Errorf("no log line of a task's run:\n%s", logs)
	}
	t.Logf("%d log lines of tasks' runs, each with its trace and span ids", n)
}

// modelCalls counts each task's model calls: the assistant turns its
// sessions stored.
func modelCalls(ctx context.Context, t *testing.T, c *client.Client, tasks []api.TaskView) map[uuid.UUID]int {
	t.Helper()
	out := map[uuid.UUID]int{}
	for _, task := range tasks {
		ss, err := c.Sessions(ctx, task.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range ss.Sessions {
			for after := int64(0); ; {
				page, err := c.Turns(ctx, s.ID, after)
				if err != nil {
					t.Fatal(err)
				}
				for _, turn := range page.Turns {
					if turn.Kind == "assistant" {
						out[task.ID]++
					}
				}
				if page.NextAfter == 0 || len(page.Turns) == 0 {
					break
				}
				after = page.NextAfter
			}
		}
		if out[task.ID] == 0 {
			t.Fatalf("task %s stored no assistant turn", task.ID)
		}
	}
	return out
}

// treeComplete says what the trace of root's tree still lacks: the
// root's submission span, each task's claim and session spans, and one
// model-call span per model call under the task's own session.
func treeComplete(tr jaegertest.Trace, root uuid.UUID, tree []api.TaskView, calls map[uuid.UUID]int) error {
	if n := len(tr.SpansOf(tracing.SpanSubmit, root.String())); n != 1 {
		return fmt.Errorf("%d submission spans of root %s, want 1", n, root)
	}
	byID := tr.ByID()
	chats := map[string]int{} // task id -> model-call spans under its session
	for _, s := range tr.Spans {
		if !strings.HasPrefix(s.OperationName, "chat ") {
			continue
		}
		if sess := nearest(byID, s, tracing.SpanSession); sess != nil {
			chats[sess.Tag(tracing.AttrTaskID)]++
		}
	}
	for _, task := range tree {
		for _, name := range []string{tracing.SpanClaim, tracing.SpanSession} {
			if len(tr.SpansOf(name, task.ID.String())) == 0 {
				return fmt.Errorf("no %s span of task %s (%d spans)", name, task.ID, len(tr.Spans))
			}
		}
		if got, want := chats[task.ID.String()], calls[task.ID]; got != want {
			return fmt.Errorf("task %s: %d model-call spans under its sessions, want %d (its model calls)", task.ID, got, want)
		}
	}
	return nil
}

// checkSubagents: every child's claims are under a spawn_agent call of
// its parent's session.
func checkSubagents(t *testing.T, tr jaegertest.Trace, tree []api.TaskView) {
	t.Helper()
	byID := tr.ByID()
	for _, task := range tree {
		if task.ParentID == uuid.Nil {
			continue
		}
		claim := tr.SpansOf(tracing.SpanClaim, task.ID.String())[0]
		spawn, ok := byID[claim.Parent()]
		if !ok || spawn.OperationName != "execute_tool spawn_agent" {
			t.Errorf("subagent %s's claim is under %q, want its parent's spawn_agent call", task.ID, spawn.OperationName)
			continue
		}
		if sess := nearest(byID, spawn, tracing.SpanSession); sess == nil || sess.Tag(tracing.AttrTaskID) != task.ParentID.String() {
			t.Errorf("subagent %s was spawned outside its parent %s's session", task.ID, task.ParentID)
		}
	}
}

// nearest is s's closest ancestor named name, nil when none.
func nearest(byID map[string]jaegertest.Span, s jaegertest.Span, name string) *jaegertest.Span {
	for p := s.Parent(); p != ""; {
		a, ok := byID[p]
		if !ok {
			return nil
		}
		if a.OperationName == name {
			return &a
		}
		p = a.Parent()
	}
	return nil
}

// lockedBuffer collects the fleet's logs from its goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
