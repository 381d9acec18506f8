// Package jaegertest runs a real Jaeger (all-in-one, in-memory storage,
// built by .ci/jaeger.sh) for tests: OTLP/HTTP in, its HTTP query API
// out. A test that finds no binary skips, or fails under
// AGENTFLEET_REQUIRE_INTEGRATION=1 (package internal/testenv).
package jaegertest

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentfleet/agentfleet/internal/testenv"
	"github.com/agentfleet/agentfleet/internal/tracing"
)

// Jaeger is a running Jaeger.
type Jaeger struct {
	// OTLP is the base URL of its OTLP/HTTP receiver
	// (OTEL_EXPORTER_OTLP_ENDPOINT).
	OTLP string
	// Query is the base URL of its HTTP query API.
	Query string
}

// Binary is the Jaeger binary: $AGENTFLEET_JAEGER_DIR/jaeger, else the
// default directory of .ci/jaeger.sh; "" when there is none.
func Binary() string {
	dir := os.Getenv("AGENTFLEET_JAEGER_DIR")
	if dir == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			return ""
		}
		dir = filepath.Join(cache, "agentfleet", "jaeger")
	}
	bin := filepath.Join(dir, "jaeger")
	if _, err := os.Stat(bin); err != nil {
		return ""
	}
	return bin
}

const config = `service:
  extensions: [jaeger_storage, jaeger_query, healthcheckv2]
  pipelines:
    traces:
      receivers: [otlp]
      processors: [batch]
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics:
      level: none
    logs:
      level: warn
extensions:
  healthcheckv2:
    use_v2: true
    http:
      endpoint: %s
  jaeger_query:
    storage:
      traces: mem
    http:
      endpoint: %s
    grpc:
      endpoint: %s
  jaeger_storage:
    backends:
      mem:
        memory:
          max_traces: 10000
receivers:
  otlp:
    protocols:
      http:
        endpoint: %s
processors:
  batch:
    timeout: 100ms
exporters:
  jaeger_storage_exporter:
    trace_storage: mem
`

// Start runs Jaeger on free loopback ports until the test ends.
func Start(t testing.TB) *Jaeger {
	t.Helper()
	bin := Binary()
	if bin == "" {
		testenv.SkipOrFatal(t, "no Jaeger binary: run .ci/jaeger.sh (builds it from the Go module proxy) or set AGENTFLEET_JAEGER_DIR")
	}
	addrs := freeAddrs(t, 4)
	dir := t.TempDir()
	path := filepath.Join(dir, "jaeger.yaml")
	if err := os.WriteFile(path, []byte(fmt.Sprintf(config, addrs[0], addrs[1], addrs[2], addrs[3])), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--config", path)
	cmd.Dir = dir
	var logs syncBuffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting Jaeger: %v", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("jaeger log:\n%s", logs.String())
		}
	})
	j := &Jaeger{OTLP: "http://" + addrs[3], Query: "http://" + addrs[1]}
	testenv.EventuallyErr(t, 60*time.Second, "Jaeger's query API", func() error {
		select {
		case <-exited:
			return fmt.Errorf("jaeger exited:\n%s", logs.String())
		default:
		}
		return testenv.AnswersOK(j.Query + "/api/services")
	})
	return j
}

// Trace is one trace as the query API returns it.
type Trace struct {
	TraceID   string             `json:"traceID"`
	Spans     []Span             `json:"spans"`
	Processes map[string]Process `json:"processes"`
}

// Span is one span of a Trace.
type Span struct {
	TraceID       string      `json:"traceID"`
	SpanID        string      `json:"spanID"`
	OperationName string      `json:"operationName"`
	References    []Reference `json:"references"`
	Tags          []Tag       `json:"tags"`
	ProcessID     string      `json:"processID"`
	StartTime     int64       `json:"startTime"` // microseconds since the epoch
	Duration      int64       `json:"duration"`  // microseconds
}

// Reference is a span's parent (CHILD_OF) or link (FOLLOWS_FROM).
type Reference struct {
	RefType string `json:"refType"`
	TraceID string `json:"traceID"`
	SpanID  string `json:"spanID"`
}

// Tag is a span attribute.
type Tag struct {
	Key   string `json:"key"`
	Value any    `json:"value"`
}

// Process is the resource of a span's process.
type Process struct {
	ServiceName string `json:"serviceName"`
	Tags        []Tag  `json:"tags"`
}

// Tag returns the value of the span's tag key as text, "" when absent.
func (s Span) Tag(key string) string {
	for _, t := range s.Tags {
		if t.Key == key {
			return fmt.Sprint(t.Value)
		}
	}
	return ""
}

// ByID indexes the trace's spans by span id.
func (tr Trace) ByID() map[string]Span {
	byID := make(map[string]Span, len(tr.Spans))
	for _, s := range tr.Spans {
		byID[s.SpanID] = s
	}
	return byID
}

// SpansOf returns the trace's spans named name of task id (their
// tracing.AttrTaskID tag), in the trace's order.
func (tr Trace) SpansOf(name, task string) []Span {
	var out []Span
	for _, s := range tr.Spans {
		if s.OperationName == name && s.Tag(tracing.AttrTaskID) == task {
			out = append(out, s)
		}
	}
	return out
}

// Parent is the span's CHILD_OF reference's span id, "" for a root.
func (s Span) Parent() string {
	for _, r := range s.References {
		if r.RefType == "CHILD_OF" {
			return r.SpanID
		}
	}
	return ""
}

// Trace reads trace id (32 hex digits); found is false while Jaeger has
// none of its spans.
func (j *Jaeger) Trace(ctx context.Context, id string) (tr Trace, found bool, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, j.Query+"/api/traces/"+id, nil)
	if err != nil {
		return tr, false, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return tr, false, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode == http.StatusNotFound {
		return tr, false, nil
	}
	var body struct {
		Data   []Trace `json:"data"`
		Errors []struct {
			Msg string `json:"msg"`
		} `json:"errors"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return tr, false, fmt.Errorf("decoding trace %s: %w", id, err)
	}
	if resp.StatusCode != http.StatusOK {
		return tr, false, fmt.Errorf("trace %s: %s %v", id, resp.Status, body.Errors)
	}
	if len(body.Data) == 0 {
		return tr, false, nil
	}
	return body.Data[0], true, nil
}

func freeAddrs(t testing.TB, n int) []string {
	t.Helper()
	out := make([]string, n)
	lns := make([]net.Listener, n)
	for i := range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns[i], out[i] = ln, ln.Addr().String()
	}
	for _, ln := range lns {
		_ = ln.Close()
	}
	return out
}

type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
