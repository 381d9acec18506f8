package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/fleet/api"
	"github.com/agentfleet/agentfleet/fleet/dispatcher"
	"github.com/agentfleet/agentfleet/internal/testenv"
	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/queue/natstest"
	"github.com/agentfleet/agentfleet/store"
	"github.com/agentfleet/agentfleet/store/sqlite"
)

// dispatcherFixture is a dispatcher API on SQLite and an in-process NATS,
// without workers.
type dispatcherFixture struct {
	url string
	st  store.Store
	q   *queue.Client
}

func startDispatcher(t *testing.T) dispatcherFixture {
	t.Helper()
	return startDispatcherWrapped(t, nil)
}

// startDispatcherWrapped is startDispatcher with wrap, when not nil, around
// the API's handler.
func startDispatcherWrapped(t *testing.T, wrap func(http.Handler) http.Handler) dispatcherFixture {
	t.Helper()
	ns := natstest.Start(t)
	nc := ns.Connect(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	q, err := queue.Open(ctx, nc, queue.Config{})
	if err != nil {
		t.Fatal(err)
	}
	st, err := sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(t.TempDir(), "d.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	d, err := dispatcher.New(st, q, dispatcher.Config{})
	if err != nil {
		t.Fatal(err)
	}
	// Run owns the pauses' watch (and closes it), among others.
	runCtx, stop := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() { defer close(ran); _ = d.Run(runCtx) }()
	t.Cleanup(func() { stop(); <-ran })
	// A finished task's stream sends its stored events before the idle wait counts.
	h := d.Handler(dispatcher.APIOptions{Token: "tk", SSEDrainIdle: 100 * time.Millisecond, SSEDonePoll: 20 * time.Millisecond})
	if wrap != nil {
		h = wrap(h)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(func() { srv.CloseClientConnections(); srv.Close() })
	t.Setenv(EnvServer, srv.URL)
	t.Setenv(EnvToken, "tk")
	return dispatcherFixture{url: srv.URL, st: st, q: q}
}

func (f dispatcherFixture) taskCount(t *testing.T) int64 {
	t.Helper()
	counts, err := f.st.CountTasks(context.Background(), store.CountTasksParams{})
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, c := range counts {
		n += c
	}
	return n
}

func writeBacklog(t *testing.T, lines ...string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "backlog.jsonl")
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestSubmitBacklogInvalidLines(t *testing.T) {
	f := startDispatcher(t)
	p := writeBacklog(t,
		`{"prompt":"fix the flaky test"}`,
		`{"prompt": "broken`,
		`# a comment`,
		`{"prompt":"p","limits":{"max_turns":-1}}`,
		`{"prompt":"bump deps","profile":"anthropic"}`,
	)
	code, out := run(t, "submit", "--file", p)
	for _, want := range []string{"line 2: not a task spec", "line 4: spec.limits.max_turns must be >= 0, got -1", "2 invalid line(s); nothing was submitted"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if code != 1 || f.taskCount(t) != 0 {
		t.Fatalf("exit %d with %d tasks stored, want 1 and none", code, f.taskCount(t))
	}
	code, out = run(t, "submit", "--file", p, "--skip-invalid", "--no-wait")
	if code != 0 || !strings.Contains(out, "submitted 2 tasks") || f.taskCount(t) != 2 {
		t.Fatalf("--skip-invalid: exit %d, %d tasks, output:\n%s", code, f.taskCount(t), out)
	}
	page, err := f.st.ListTasks(context.Background(), store.ListTasksParams{})
	if err != nil || len(page.Tasks) != 2 || page.Tasks[0].Labels[BacklogLabel] == "" {
		t.Fatalf("backlog tasks %+v %v, want 2 labelled", page.Tasks, err)
	}
}

// TestSubmitBacklogProgress follows a backlog to its end: the tasks are
// finished here by hand, as workers would.
func TestSubmitBacklogProgress(t *testing.T) {
	f := startDispatcher(t)
	p := writeBacklog(t, `{"prompt":"a"}`, `{"prompt":"b"}`)
	finisher := make(chan error, 1)
	go func() { finisher <- finishAll(f.st, 2) }()
	code, out := run(t, "submit", "--file", p, "--poll", "20ms")
	if err := <-finisher; err != nil {
		t.Fatal(err)
	}
	if code != 1 || !strings.Contains(out, "2 tasks in") || !strings.Contains(out, "1 succeeded, 1 failed") || !strings.Contains(out, "submitted 2/2") {
		t.Fatalf("exit %d, output:\n%s\nwant a summary with 1 succeeded and 1 failed (exit 1)", code, out)
	}
}

// finishAll waits until n tasks exist, then ends the first as succeeded and
// the others as failed.
func finishAll(st store.Store, n int) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		page, err := st.ListTasks(ctx, store.ListTasksParams{States: []store.TaskState{store.TaskQueued}})
		if err != nil {
			return err
		}
		if len(page.Tasks) == n {
			for i, task := range page.Tasks {
				to := store.TaskFailed
				if i == 0 {
					to = store.TaskSucceeded
				}
				if _, err := st.TransitionTask(ctx, store.TransitionTaskParams{ID: task.ID, From: store.TaskQueued, To: store.TaskRunning}); err != nil {
					if _, err := st.ClaimTask(ctx, store.ClaimTaskParams{ID: task.ID, WorkerID: "w"}); err != nil {
						return err
					}
				}
				if _, err := st.TransitionTask(ctx, store.TransitionTaskParams{ID: task.ID, From: store.TaskRunning, To: to}); err != nil {
					return err
				}
			}
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func TestSubmitGetCancelSteer(t *testing.T) {
	f := startDispatcher(t)
	code, out := run(t, "submit", "fix the build", "--label", "team=core", "--max-turns", "5", "--key", "k1", "--no-wait")
	id := strings.TrimSpace(out)
	if code != 0 || uuid.Validate(id) != nil {
		t.Fatalf("submit: exit %d, output %q", code, out)
	}
	if code, out := run(t, "submit", "fix the build", "--key", "k1", "--no-wait"); code != 0 || !strings.Contains(out, id+" (existing") {
		t.Fatalf("repeated key: exit %d, output %q", code, out)
	}
	if code, out := run(t, "submit", "p", "--max-turns", "-1"); code != 2 || !strings.Contains(out, "spec.limits.max_turns must be >= 0") {
		t.Fatalf("bad limit: exit %d, output %q", code, out)
	}
	if code, out := run(t, "get", id); code != 0 || !strings.Contains(out, "queued") {
		t.Fatalf("get: exit %d, output %q", code, out)
	}
	code, out = run(t, "get", id, "--json")
	var v api.TaskView
	if code != 0 || json.Unmarshal([]byte(out), &v) != nil || v.Labels["team"] != "core" {
		t.Fatalf("get --json: exit %d, output %q", code, out)
	}
	if code, out := run(t, "steer", id, "hurry"); code != 1 || !strings.Contains(out, "not_running") {
		t.Fatalf("steer a queued task: exit %d, output %q", code, out)
	}
	if code, out := run(t, "cancel", id); code != 0 || !strings.Contains(out, "cancelled 1 task") {
		t.Fatalf("cancel: exit %d, output %q", code, out)
	}
	if code, out := run(t, "get", "nope"); code != 2 || !strings.Contains(out, "not a task id") {
		t.Fatalf("get nope: exit %d, output %q", code, out)
	}
	if code, out := run(t, "get", uuid.NewString(), "--token", "wrong"); code != 1 || !strings.Contains(out, "401") {
		t.Fatalf("wrong token: exit %d, output %q", code, out)
	}
	if n := f.taskCount(t); n != 1 {
		t.Fatalf("%d tasks stored, want 1", n)
	}
}

// submit with one prompt follows the task's events until it ends, as the
// README says, and its exit status says how it ended.
func TestSubmitFollowsTheTask(t *testing.T) {
	f := startDispatcher(t)
	done := make(chan result, 1)
	go func() {
		code, out := run(t, "submit", "fix the build", "--profile", "openai")
		done <- result{code, out}
	}()
	var id uuid.UUID
	testenv.EventuallyErr(t, 30*time.Second, "the submitted task", func() error {
		list, err := f.st.ListTasks(context.Background(), store.ListTasksParams{Limit: 1})
		if err == nil && len(list.Tasks) == 0 {
			err = errors.New("no task yet")
		}
		if err == nil {
			id = list.Tasks[0].ID
		}
		return err
	})
	publishEvents(t, f, id, `{"text":"Fixed it."}`)
	if _, err := f.st.ClaimTask(context.Background(), store.ClaimTaskParams{ID: id, WorkerID: "w"}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.st.TransitionTask(context.Background(), store.TransitionTaskParams{ID: id, From: store.TaskRunning, To: store.TaskFailed, Error: "model_error"}); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-done:
		if r.code != 1 || !strings.Contains(r.out, id.String()) || !strings.Contains(r.out, "assistant: Fixed it.") ||
			!strings.Contains(r.out, "task "+id.String()+" failed") {
			t.Fatalf("submit: exit %d, output:\n%s", r.code, r.out)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("submit did not return once the task ended")
	}
}

// submit says when it stops following before the task ends, and how to go
// on: a stream that ended early (a dispatcher restarted) is exit status 1,
// since how the task ends is unknown; an interrupt is 0, as for a backlog.
func TestSubmitSaysWhenFollowingStopsEarly(t *testing.T) {
	t.Run("the stream ends", func(t *testing.T) {
		sc := newStreamCutter()
		startDispatcherWrapped(t, sc.wrap)
		done := make(chan result, 1)
		go func() { done <- runResult(run(t, "submit", "fix the build")) }()
		sc.waitOpened(t)
		close(sc.cut)
		r := waitResult(t, done)
		id := firstLine(r.out)
		if r.code != 1 || uuid.Validate(id) != nil || !strings.Contains(r.out, "ended before the task did") ||
			!strings.Contains(r.out, "dispatcher tail "+id) {
			t.Fatalf("submit: exit %d, output:\n%s\nwant exit 1 and the advice to tail the task", r.code, r.out)
		}
	})
	t.Run("interrupted", func(t *testing.T) {
		sc := newStreamCutter()
		startDispatcherWrapped(t, sc.wrap)
		ctx, interrupt := context.WithCancel(context.Background())
		defer interrupt()
		done := make(chan result, 1)
		go func() {
			var out bytes.Buffer
			code := execute(ctx, []string{"submit", "fix the build"}, strings.NewReader(""), &out, &out)
			done <- result{code, out.String()}
		}()
		sc.waitOpened(t)
		interrupt()
		r := waitResult(t, done)
		id := firstLine(r.out)
		if r.code != 0 || !strings.Contains(r.out, "stopped following; task "+id+" goes on (dispatcher tail "+id+")") {
			t.Fatalf("submit: exit %d, output:\n%s\nwant exit 0 and a note that the task goes on", r.code, r.out)
		}
	})
}

// A task submitted without a profile gets the dispatcher's default,
// anthropic: the profile of the README's worker example (ANTHROPIC_API_KEY).
func TestSubmitWithoutProfileIsAnthropic(t *testing.T) {
	f := startDispatcher(t)
	code, out := run(t, "submit", "fix the build", "--no-wait")
	id, err := uuid.Parse(strings.TrimSpace(out))
	if code != 0 || err != nil {
		t.Fatalf("submit: exit %d, output %q", code, out)
	}
	task, err := f.st.GetTask(context.Background(), store.GetTaskParams{ID: id})
	if err != nil {
		t.Fatal(err)
	}
	var spec struct {
		Profile string `json:"profile"`
	}
	if err := json.Unmarshal(task.Spec, &spec); err != nil || spec.Profile != "anthropic" {
		t.Fatalf("stored spec %s (%v): want the profile anthropic", task.Spec, err)
	}
}

type result struct {
	code int
	out  string
}

func runResult(code int, out string) result { return result{code, out} }

// waitResult waits for a command running in the background to return.
func waitResult(t *testing.T, done <-chan result) result {
	t.Helper()
	select {
	case r := <-done:
		return r
	case <-time.After(30 * time.Second):
		t.Fatal("the command did not return")
		return result{}
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return strings.TrimSpace(line)
}

// streamCutter ends the API's event streams on demand without the task's
// end, as a restarting dispatcher or a proxy would.
type streamCutter struct {
	opened chan struct{} // a stream has sent its first bytes
	cut    chan struct{} // closed: every stream ends
}

func newStreamCutter() *streamCutter {
	return &streamCutter{opened: make(chan struct{}, 1), cut: make(chan struct{})}
}

func (sc *streamCutter) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/events") {
			h.ServeHTTP(w, r)
			return
		}
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		go func() {
			select {
			case <-sc.cut:
				cancel()
			case <-ctx.Done():
			}
		}()
		h.ServeHTTP(&flushSignal{ResponseWriter: w, flushed: sc.opened}, r.WithContext(ctx))
	})
}

func (sc *streamCutter) waitOpened(t *testing.T) {
	t.Helper()
	select {
	case <-sc.opened:
	case <-time.After(30 * time.Second):
		t.Fatal("no event stream was opened")
	}
}

// flushSignal signals flushed (without blocking) at its first flush.
type flushSignal struct {
	http.ResponseWriter
	flushed chan<- struct{}
	once    sync.Once
}

func (f *flushSignal) Flush() {
	_ = http.NewResponseController(f.ResponseWriter).Flush()
	f.once.Do(func() {
		select {
		case f.flushed <- struct{}{}:
		default:
		}
	})
}

func (f *flushSignal) Unwrap() http.ResponseWriter { return f.ResponseWriter }

// publishEvents publishes one text delta per data, in seq order, for task id.
func publishEvents(t *testing.T, f dispatcherFixture, id uuid.UUID, data ...string) {
	t.Helper()
	ctx := context.Background()
	pub, err := f.q.NewEventPublisher()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = pub.Close(ctx) }()
	for i, d := range data {
		e := queue.Event{ID: uuid.NewString(), Kind: "ASSISTANT_TEXT_DELTA", SessionID: id.String(), TaskID: id.String(),
			RootTaskID: id.String(), Seq: uint64(i + 1), Data: json.RawMessage(d)}
		if err := pub.PublishConfirmed(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
}

func TestTail(t *testing.T) {
	f := startDispatcher(t)
	ctx := context.Background()
	res, err := f.st.CreateTask(ctx, store.CreateTaskParams{Spec: json.RawMessage(`{"prompt":"p","profile":"openai"}`)})
	if err != nil {
		t.Fatal(err)
	}
	id := res.Task.ID
	pub, err := f.q.NewEventPublisher()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = pub.Close(ctx) }()
	for i, ev := range []struct{ kind, data string }{
		{"ASSISTANT_TEXT_DELTA", `{"text":"Looking "}`},
		{"ASSISTANT_TEXT_DELTA", `{"text":"now."}`},
		{"TOOL_CALL_START", `{"tool_name":"shell","arguments":{"command":"go test ./..."}}`},
		{"TOOL_CALL_END", `{"tool_name":"shell","output":"ok"}`},
	} {
		e := queue.Event{ID: uuid.NewString(), Kind: ev.kind, SessionID: id.String(), TaskID: id.String(), RootTaskID: id.String(),
			Seq: uint64(i + 1), Data: json.RawMessage(ev.data)}
		if err := pub.PublishConfirmed(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.st.ClaimTask(ctx, store.ClaimTaskParams{ID: id, WorkerID: "w"}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.st.TransitionTask(ctx, store.TransitionTaskParams{ID: id, From: store.TaskRunning, To: store.TaskSucceeded}); err != nil {
		t.Fatal(err)
	}
	code, out := run(t, "tail", id.String())
	for _, want := range []string{"assistant: Looking now.", `-> shell {"command":"go test ./..."}`, "<- shell ok: ok", "task " + id.String() + " succeeded"} {
		if !strings.Contains(out, want) {
			t.Errorf("tail output lacks %q:\n%s", want, out)
		}
	}
	if code != 0 {
		t.Fatalf("tail exit %d", code)
	}
}

func TestServeConfigValidate(t *testing.T) {
	ok := ServeConfig{Token: "t", DatabaseURL: "x.db"}.WithDefaults()
	if err := ok.Validate(); err != nil {
		t.Fatalf("valid config: %v", err)
	}
	for _, c := range []struct {
		edit func(*ServeConfig)
		want string
	}{
		{func(c *ServeConfig) { c.Token = "" }, "token is required"},
		{func(c *ServeConfig) { c.NoAuth = true }, "token and no_auth"},
		{func(c *ServeConfig) { c.DatabaseURL = "" }, "database_url is required"},
		{func(c *ServeConfig) { c.Listen = "8080" }, "listen"},
		{func(c *ServeConfig) { c.LogFormat = "xml" }, "log_format"},
		{func(c *ServeConfig) { c.DefaultProfile = "llama" }, "default_profile"},
		{func(c *ServeConfig) { c.NATS.User = "u" }, "nats"},
	} {
		cfg := ok
		c.edit(&cfg)
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Validate = %v, want an error containing %q", err, c.want)
		}
	}
	code, out := run(t, "serve", "--database-url", "x.db", "--token", "")
	if code != 2 || !strings.Contains(out, "token is required") {
		t.Fatalf("serve without a token: exit %d, output %q", code, out)
	}
}
