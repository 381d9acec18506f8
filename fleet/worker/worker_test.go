package worker_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"

	"github.com/agentfleet/agentfleet/agent"
	"github.com/agentfleet/agentfleet/execenv/sshtest"
	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/fleettest"
	"github.com/agentfleet/agentfleet/fleet/internal/taskops"
	"github.com/agentfleet/agentfleet/fleet/worker"
	"github.com/agentfleet/agentfleet/internal/testenv"
	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/llm/sim"
	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/store"
)

func waitCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), fleettest.Wait)
	t.Cleanup(cancel)
	return ctx
}

func succeeded(t *testing.T, task store.Task) fleet.TaskResult {
	t.Helper()
	if task.State != store.TaskSucceeded {
		t.Fatalf("task %s: state %s, error %q, result %s", task.ID, task.State, task.Error, task.Result)
	}
	return fleettest.Result(t, task)
}

func TestWorkerRunsATask(t *testing.T) {
	t.Parallel()
	f := fleettest.Start(t, fleettest.Options{Workers: 1})
	id := f.Submit(fleettest.Spec("hello",
		fleettest.Step{Calls: []fleettest.Call{fleettest.Shell("echo from-the-shell > out.txt && cat out.txt")}},
		fleettest.Step{Text: "finished: {{results}}"}))
	res := succeeded(t, f.WaitDone(id))
	if !res.Success || res.TurnsUsed != 2 || !strings.Contains(res.FinalText, "from-the-shell") {
		t.Fatalf("result %+v", res)
	}
	if res.Usage.InputTokens != 200 || res.Usage.OutputTokens != 40 {
		t.Fatalf("usage %+v, want 200 in and 40 out over two calls", res.Usage)
	}
	turns, err := f.Store.LoadTurns(waitCtx(t), store.LoadTurnsParams{SessionID: id})
	if err != nil {
		t.Fatal(err)
	}
	kinds := []string{}
	for _, tr := range turns {
		kinds = append(kinds, tr.Kind)
	}
	if got := strings.Join(kinds, ","); got != "user,assistant,tool_results,assistant" {
		t.Fatalf("turn kinds %s", got)
	}
	var call agent.Turn
	if err := json.Unmarshal(turns[1].Payload, &call); err != nil || len(call.ToolCalls) != 1 {
		t.Fatalf("assistant turn %s: %v", turns[1].Payload, err)
	}
	out, err := f.Store.GetToolOutput(waitCtx(t), store.GetToolOutputParams{SessionID: id, CallID: call.ToolCalls[0].ID})
	if err != nil || !strings.Contains(out.Output, "from-the-shell") {
		t.Fatalf("tool output %+v: %v", out, err)
	}
}

// TestFleetRunsABatch is issue 6's main test: 3 workers, 200 tasks, every
// one succeeds with its turns stored, and an independent subscriber sees
// every event of every session with no gap in seq.
func TestFleetRunsABatch(t *testing.T) {
	t.Parallel()
	const n = 200
	// 200 shells under bubblewrap cost about 30 ms each on a loaded
	// machine; this test is about the fleet, so its shells run unconfined
	// (TestTaskShellIsConfined covers the sandbox).
	f := fleettest.Start(t, fleettest.Options{Workers: 3, Slots: 8, Worker: func(_ int, c *worker.Config) { c.Sandbox = worker.SandboxOff }})
	ctx := waitCtx(t)
	sub, err := f.Queue.SubscribeEvents(ctx, queue.EventFilter{}, queue.FromStart())
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Stop()
	ids := make([]uuid.UUID, n)
	for i := range ids {
		ids[i] = f.Submit(fleettest.Spec(fmt.Sprintf("task %d", i),
			fleettest.Step{Calls: []fleettest.Call{fleettest.Shell(fmt.Sprintf("echo task-%d", i))}},
			fleettest.Step{Text: "done {{results}}"}))
	}
	seqs := map[string][]uint64{}
	ended := 0
	for ended < n {
		ev, err := sub.Next(ctx)
		if err != nil {
			t.Fatalf("after %d session ends: %v", ended, err)
		}
		seqs[ev.SessionID] = append(seqs[ev.SessionID], ev.Seq)
		if ev.Kind == fleet.KindSessionEnd {
			ended++
		}
	}
	workers := map[string]int{}
	for i, id := range ids {
		task := f.Task(id)
		res := succeeded(t, task)
		if !strings.Contains(res.FinalText, fmt.Sprintf("task-%d", i)) {
			t.Errorf("task %d final text %q", i, res.FinalText)
		}
		workers[task.WorkerID]++
		turns, err := f.Store.LoadTurns(ctx, store.LoadTurnsParams{SessionID: id})
		if err != nil || len(turns) != 4 {
			t.Errorf("task %d: %d turns stored (%v), want 4", i, len(turns), err)
		}
		got := seqs[id.String()]
		if len(got) == 0 {
			t.Errorf("task %d: no events", i)
		}
		for j, s := range got {
			if s != uint64(j+1) {
				t.Fatalf("task %d: event seqs %v are not 1, 2, 3...", i, got)
			}
		}
	}
	if len(workers) != 3 {
		t.Errorf("tasks ran on %d workers (%v), want all 3", len(workers), workers)
	}
}

func TestSSHEnvironment(t *testing.T) {
	t.Parallel()
	sshd := sshtest.Start(t)
	f := fleettest.Start(t, fleettest.Options{Workers: 1, Worker: func(_ int, c *worker.Config) {
		c.SSHKeys = map[string]worker.SSHKeyConfig{"test-key": {KeyFile: sshd.KeyFile, KnownHostsFile: sshd.KnownHostsFile}}
	}})
	dir := t.TempDir()
	spec := fleettest.Spec("over ssh",
		fleettest.Step{Calls: []fleettest.Call{fleettest.Shell("echo remote > made-over-ssh.txt && pwd")}},
		fleettest.Step{Text: "{{results}}"})
	spec.Environment = fleet.Environment{Kind: fleet.EnvSSH, Host: sshd.Host, Port: sshd.Port, User: sshd.User,
		KeyRef: "test-key", WorkingDir: dir}
	res := succeeded(t, f.WaitDone(f.Submit(spec)))
	if !strings.Contains(res.FinalText, dir) {
		t.Fatalf("final text %q does not name the remote working dir %s", res.FinalText, dir)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "made-over-ssh.txt")); err != nil || string(b) != "remote\n" {
		t.Fatalf("file written over ssh: %q, %v", b, err)
	}
	// A key reference the worker does not know fails the task for good.
	spec.Environment.KeyRef = "unknown-key"
	task := f.WaitDone(f.Submit(spec))
	if task.State != store.TaskFailed || task.Error != fleet.ReasonEnvironment {
		t.Fatalf("unknown key ref: state %s error %q", task.State, task.Error)
	}
}

// runningAtGate submits a task that stops at a gate in its first model call
// and waits until it is there.
func runningAtGate(t *testing.T, f *fleettest.Fleet, gate string, steps ...fleettest.Step) uuid.UUID {
	t.Helper()
	id := f.Submit(fleettest.Spec(gate, steps...))
	select {
	case <-f.Model.Arrived(gate):
	case <-time.After(fleettest.Wait):
		t.Fatalf("task never reached gate %s", gate)
	}
	return id
}

func TestControlSteerAndAbort(t *testing.T) {
	t.Parallel()
	f := fleettest.Start(t, fleettest.Options{Workers: 2})
	ctx := waitCtx(t)

	id := runningAtGate(t, f, "steer",
		fleettest.Step{Gate: "steer", Calls: []fleettest.Call{fleettest.Shell("true")}},
		fleettest.Step{Text: "last said: {{last_user}}"})
	// The harness's own connection is not any worker's: the request crosses NATS.
	reply, err := f.Queue.Control(ctx, fleet.DefaultTenant, id.String(), queue.ControlRequest{Op: queue.OpSteer, Message: "please also say hi"})
	if err != nil {
		t.Fatal(err)
	}
	if reply.Status == nil || reply.Status.WorkerID != f.Task(id).WorkerID {
		t.Fatalf("status %+v, want the worker running the task", reply.Status)
	}
	f.Model.Open("steer")
	res := succeeded(t, f.WaitDone(id))
	if res.FinalText != "last said: please also say hi" {
		t.Fatalf("final text %q: the steering message did not reach the model", res.FinalText)
	}

	id = runningAtGate(t, f, "abort", fleettest.Step{Gate: "abort", Text: "never"})
	if _, err := f.Queue.Control(ctx, fleet.DefaultTenant, id.String(), queue.ControlRequest{Op: queue.OpAbort}); err != nil {
		t.Fatal(err)
	}
	task := f.WaitDone(id)
	if task.State != store.TaskCancelled || task.Error != fleet.ReasonAborted {
		t.Fatalf("aborted task: state %s error %q", task.State, task.Error)
	}
	if _, err := f.Queue.Control(ctx, fleet.DefaultTenant, id.String(), queue.ControlRequest{Op: queue.OpStatus}); err == nil {
		t.Fatal("control of an ended session answered")
	}
}

func TestCancelRunningTask(t *testing.T) {
	t.Parallel()
	f := fleettest.Start(t, fleettest.Options{Workers: 1})
	steps := []fleettest.Step{{Gate: "cancel", Calls: []fleettest.Call{fleettest.Shell("true")}}, {Text: "should not happen"}}
	id := runningAtGate(t, f, "cancel", steps...)
	if _, err := (&taskops.Completer{Store: f.Store, Queue: f.Queue}).CancelTree(waitCtx(t), id, "user asked"); err != nil {
		t.Fatal(err)
	}
	task := f.WaitDone(id)
	if task.State != store.TaskCancelled || task.Error != "user asked" {
		t.Fatalf("state %s error %q", task.State, task.Error)
	}
	f.Model.Open("cancel")
	// The slot is free again: another task runs to the end.
	succeeded(t, f.WaitDone(f.Submit(fleettest.Spec("after", fleettest.Step{Text: "ok"}))))
	if n := f.Model.Requests(fleettest.Prompt("cancel", steps...), 1); n != 0 {
		t.Fatalf("the cancelled session asked the model %d more times", n)
	}
	// The cancel is counted by whoever cancelled; the worker counts only the
	// end it wrote. (It used to count the cancelled run too, as if it had
	// ended it.)
	g := f.Workers()[0].Gatherer()
	testenv.Eventually(t, fleettest.Wait, "the success counted", func() bool {
		return finishedByState(t, g)[store.TaskSucceeded] == 1
	})
	if n := finishedByState(t, g); n[store.TaskCancelled] != 0 || len(n) != 1 {
		t.Fatalf("worker's tasks_finished_total %v; want only the one success it wrote", n)
	}
}

// TestCancelUnheardStopsAtTheFence: a cancel whose abort reached no one
// (it came between the claim and the session's control subscription) still
// stops the session at its next recorded turn, before its tools run.
func TestCancelUnheardStopsAtTheFence(t *testing.T) {
	t.Parallel()
	f := fleettest.Start(t, fleettest.Options{Workers: 1, Slots: 1})
	steps := []fleettest.Step{{Gate: "unheard", Calls: []fleettest.Call{fleettest.Shell("echo ran")}}, {Text: "should not happen"}}
	id := runningAtGate(t, f, "unheard", steps...)
	// The store only: no abort goes over control.
	if _, err := f.Store.CancelSubtree(waitCtx(t), store.CancelSubtreeParams{ID: id, Reason: "unheard"}); err != nil {
		t.Fatal(err)
	}
	f.Model.Open("unheard")
	// One slot: the next task runs once the cancelled session has stopped.
	succeeded(t, f.WaitDone(f.Submit(fleettest.Spec("after the fence", fleettest.Step{Text: "ok"}))))
	if n := f.Model.Requests(fleettest.Prompt("unheard", steps...), 1); n != 0 {
		t.Fatalf("the cancelled session went on: the model was asked %d more times", n)
	}
	turns, err := f.Store.LoadTurns(waitCtx(t), store.LoadTurnsParams{SessionID: id})
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range turns {
		if tr.Kind != string(agent.TurnUser) {
			t.Fatalf("a %s turn was recorded after the cancel: %s", tr.Kind, tr.Payload)
		}
	}
	if task := f.Task(id); task.State != store.TaskCancelled || task.Error != "unheard" {
		t.Fatalf("state %s error %q", task.State, task.Error)
	}
}

func TestRateLimitIsDelayedRedelivery(t *testing.T) {
	t.Parallel()
	f := fleettest.Start(t, fleettest.Options{Workers: 1})
	steps := []fleettest.Step{{Fail: &sim.Failure{Kind: llm.ErrRateLimited, RetryAfter: "1"}, Text: "after the limit"}}
	start := time.Now()
	id := f.Submit(fleettest.Spec("limited", steps...))
	task := f.WaitDone(id)
	res := succeeded(t, task)
	if res.FinalText != "after the limit" || task.Attempts != 2 {
		t.Fatalf("result %+v after %d attempts, want success on the second", res, task.Attempts)
	}
	if waited := time.Since(start); waited < time.Second {
		t.Fatalf("redelivered after %s, before the provider's retry-after of 1s", waited)
	}
	if n := f.Model.Requests(fleettest.Prompt("limited", steps...), 0); n != 2 {
		t.Fatalf("model asked %d times, want 2", n)
	}
}

// TestFailedTaskKeepsItsPrompt: the recorder holds the opening prompt back
// to write it with the next turn; a task that fails before there is one
// still has its prompt recorded.
func TestFailedTaskKeepsItsPrompt(t *testing.T) {
	t.Parallel()
	f := fleettest.Start(t, fleettest.Options{Workers: 1})
	spec := fleettest.Spec("refused", fleettest.Step{Fail: &sim.Failure{Kind: llm.ErrInvalidRequest}, FailTimes: 1000})
	id := f.Submit(spec)
	task := f.WaitDone(id)
	if task.State != store.TaskFailed || task.Error != fleet.ReasonModelError {
		t.Fatalf("state %s error %q, want failed with %s", task.State, task.Error, fleet.ReasonModelError)
	}
	turns, err := f.Store.LoadTurns(waitCtx(t), store.LoadTurnsParams{SessionID: id})
	if err != nil {
		t.Fatal(err)
	}
	var first agent.Turn
	if len(turns) != 1 || json.Unmarshal(turns[0].Payload, &first) != nil || first.Kind != agent.TurnUser || first.Text != spec.Prompt {
		t.Fatalf("recorded turns %+v, want just the prompt", turns)
	}
}

func TestPoisonTaskEndsInDeadLetter(t *testing.T) {
	t.Parallel()
	f := fleettest.Start(t, fleettest.Options{Workers: 1, Queue: queue.Config{MaxDeliver: 3}})
	id := f.Submit(fleettest.Spec("poison", fleettest.Step{Fail: &sim.Failure{Kind: llm.ErrOverloaded}, FailTimes: 1000}))
	task := f.WaitDone(id)
	if task.State != store.TaskFailed || task.Error != fleet.ReasonDeadLetter {
		t.Fatalf("state %s error %q, want failed with %s", task.State, task.Error, fleet.ReasonDeadLetter)
	}
	if task.Attempts != 3 {
		t.Fatalf("%d attempts, want MaxDeliver = 3", task.Attempts)
	}
	if res := fleettest.Result(t, task); !strings.Contains(res.Error, "max_deliveries") {
		t.Fatalf("result error %q", res.Error)
	}
}

func TestCorruptTaskMessageIsTermedAndFailed(t *testing.T) {
	t.Parallel()
	f := fleettest.Start(t, fleettest.Options{Workers: 1})
	ctx := waitCtx(t)
	body, _ := json.Marshal(fleettest.Spec("x").WithDefaults())
	created, err := f.Store.CreateTask(ctx, store.CreateTaskParams{Spec: body})
	if err != nil {
		t.Fatal(err)
	}
	msg := nats.NewMsg(f.Queue.Subjects().Tasks("default"))
	msg.Header.Set(queue.HeaderTaskID, created.Task.ID.String())
	msg.Data = []byte(`{"type":"start","task_id":`) // cut short
	if err := f.NC.PublishMsg(msg); err != nil {
		t.Fatal(err)
	}
	task := f.WaitDone(created.Task.ID)
	if task.State != store.TaskFailed || task.Error != fleet.ReasonCorruptMessage {
		t.Fatalf("state %s error %q", task.State, task.Error)
	}
	if res := fleettest.Result(t, task); !strings.Contains(res.Error, "corrupt") {
		t.Fatalf("result error %q", res.Error)
	}
	if lag := f.WaitQueueDrained("default"); lag.Delivered != 1 {
		t.Fatalf("the corrupt message was delivered %d times, want once: it must be termed", lag.Delivered)
	}
}

// TestDrainHandsSessionsBack stops a worker (as SIGTERM does) while a
// session waits for the model: after the grace period the session is
// aborted and handed back, and another worker finishes it from its recorded
// turns.
func TestDrainHandsSessionsBack(t *testing.T) {
	t.Parallel()
	f := fleettest.Start(t, fleettest.Options{Workers: 1, Worker: func(_ int, c *worker.Config) {
		c.DrainGrace = 100 * time.Millisecond
	}})
	steps := []fleettest.Step{
		{Calls: []fleettest.Call{fleettest.Shell("echo first-round")}},
		{Gate: "drain", Text: "finished after {{results}}"},
	}
	id := runningAtGate(t, f, "drain", steps...)
	f.Workers()[0].Stop(t)
	task := f.Task(id)
	if task.State != store.TaskQueued {
		t.Fatalf("after the drain the task is %s, want queued (handed back)", task.State)
	}
	f.Model.Open("drain")
	f.StartWorker()
	res := succeeded(t, f.WaitDone(id))
	prompt := fleettest.Prompt("drain", steps...)
	if f.Model.Requests(prompt, 0) != 1 || res.TurnsUsed != 2 || !strings.Contains(res.FinalText, "first-round") {
		t.Fatalf("result %+v, step 0 asked %d times: the session started over", res, f.Model.Requests(prompt, 0))
	}
}

// TestEventsContinueAcrossResume checks that a session resumed on another
// worker continues its event seq.
func TestEventsContinueAcrossResume(t *testing.T) {
	t.Parallel()
	f := fleettest.Start(t, fleettest.Options{Workers: 1, Worker: func(_ int, c *worker.Config) {
		c.DrainGrace = 10 * time.Millisecond
	}})
	ctx := waitCtx(t)
	id := runningAtGate(t, f, "seq", fleettest.Step{Calls: []fleettest.Call{fleettest.Shell("true")}},
		fleettest.Step{Gate: "seq", Text: "ok"})
	f.Workers()[0].Stop(t)
	f.Model.Open("seq")
	f.StartWorker()
	succeeded(t, f.WaitDone(id))
	sub, err := f.Queue.SubscribeEvents(ctx, queue.EventFilter{TaskID: id.String()}, queue.FromStart())
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Stop()
	var mu sync.Mutex
	var seqs []uint64
	for {
		ev, err := sub.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		seqs = append(seqs, ev.Seq)
		mu.Unlock()
		if ev.Kind == fleet.KindSessionEnd {
			break
		}
	}
	for i, s := range seqs {
		if s != uint64(i+1) {
			t.Fatalf("seqs %v have a gap or a restart", seqs)
		}
	}
}

// TestKindSessionEndIsTheAgentsEvent: fleet names the final SESSION_END
// without importing the agent (so clients do not link it); the names must
// stay equal, since consumers filter on the subject's kind token.
func TestKindSessionEndIsTheAgentsEvent(t *testing.T) {
	if fleet.KindSessionEnd != string(agent.EventSessionEnd) {
		t.Fatalf("fleet.KindSessionEnd = %q, agent.EventSessionEnd = %q", fleet.KindSessionEnd, agent.EventSessionEnd)
	}
}
