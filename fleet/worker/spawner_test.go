package worker_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/agent"
	"github.com/agentfleet/agentfleet/execenv/sshtest"
	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/fleettest"
	"github.com/agentfleet/agentfleet/fleet/internal/taskops"
	"github.com/agentfleet/agentfleet/fleet/worker"
	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/llm/sim"
	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/store"
)

// fanOut is a parent script: spawn one child per entry, wait for all of
// them in one round, then answer with every result.
func fanOut(children [][]fleettest.Step) []fleettest.Step {
	var spawns, waits []fleettest.Call
	for i, steps := range children {
		spawns = append(spawns, fleettest.Spawn(fmt.Sprintf("child %d", i), steps...))
		waits = append(waits, fleettest.Call{Name: "wait", Args: map[string]any{"agent_id": fmt.Sprintf("{{agent:%d}}", i)}})
	}
	return []fleettest.Step{{Calls: spawns}, {Calls: waits}, {Text: "children said:\n{{results}}"}}
}

// sharedSpec is a parent spec whose environment is a shared local volume,
// so its children may run on any worker.
func sharedSpec(t *testing.T, title string, steps ...fleettest.Step) fleet.TaskSpec {
	spec := fleettest.Spec(title, steps...)
	spec.Environment = fleet.Environment{Kind: fleet.EnvLocal, WorkingDir: fleettest.SharedDir(t), Shared: true}
	return spec
}

func children(t *testing.T, f *fleettest.Fleet, parent uuid.UUID) []store.Task {
	t.Helper()
	kids, err := f.Store.Children(waitCtx(t), store.ChildrenParams{ParentID: parent})
	if err != nil {
		t.Fatal(err)
	}
	return kids.Children
}

// TestTwentyChildrenOnFourSlots: a parent spawning 20 children on 2
// workers with 2 slots each completes, because a waiting parent holds no
// slot. The children's answers wait at a gate until four of them run at
// once, so all four slots, both workers', are in use: trivial children
// left free could all finish on one worker before the other's next pull.
func TestTwentyChildrenOnFourSlots(t *testing.T) {
	t.Parallel()
	f := fleettest.Start(t, fleettest.Options{Workers: 2, Slots: 2})
	var kids [][]fleettest.Step
	for i := range 20 {
		kids = append(kids, []fleettest.Step{{Gate: "four-running", Text: fmt.Sprintf("output of child %d", i)}})
	}
	spec := sharedSpec(t, "twenty", fanOut(kids)...)
	spec.MaxLiveChildren = 20
	id := f.Submit(spec)
	if err := f.Model.WaitArrivals(waitCtx(t), "four-running", 4); err != nil {
		t.Fatalf("waiting for four children to run at once: %v", err)
	}
	f.Model.Open("four-running")
	res := succeeded(t, f.WaitDone(id))
	for i := range 20 {
		if !strings.Contains(res.FinalText, fmt.Sprintf("output of child %d\"", i)) {
			t.Fatalf("parent result lacks child %d:\n%s", i, res.FinalText)
		}
	}
	workers := map[string]bool{}
	for _, c := range children(t, f, id) {
		succeeded(t, c)
		workers[c.WorkerID] = true
		if c.RootID != id || c.Depth != 1 {
			t.Fatalf("child %s: root %s depth %d", c.ID, c.RootID, c.Depth)
		}
	}
	if len(workers) != 2 {
		t.Fatalf("children ran on %v, want both workers", workers)
	}
}

// TestSSHChildrenRunOnBothWorkers: children of an SSH parent run on both
// workers at once, and the parent's result includes every child's output.
func TestSSHChildrenRunOnBothWorkers(t *testing.T) {
	t.Parallel()
	sshd := sshtest.Start(t)
	f := fleettest.Start(t, fleettest.Options{Workers: 2, Slots: 2, Worker: func(_ int, c *worker.Config) {
		c.SSHKeys = map[string]worker.SSHKeyConfig{"k": {KeyFile: sshd.KeyFile, KnownHostsFile: sshd.KnownHostsFile}}
	}})
	dir := t.TempDir()
	var kids [][]fleettest.Step
	for i := range 4 {
		kids = append(kids, []fleettest.Step{
			{Gate: "all-four", Calls: []fleettest.Call{fleettest.Shell(fmt.Sprintf("echo child-%d > c%d.txt && cat c%d.txt", i, i, i))}},
			{Text: "child says {{results}}"},
		})
	}
	spec := fleettest.Spec("ssh parent", fanOut(kids)...)
	spec.Environment = fleet.Environment{Kind: fleet.EnvSSH, Host: sshd.Host, Port: sshd.Port, User: sshd.User, KeyRef: "k", WorkingDir: dir}
	id := f.Submit(spec)
	// Four children at the gate at once need all four slots: both workers.
	if err := f.Model.WaitArrivals(waitCtx(t), "all-four", 4); err != nil {
		t.Fatal(err)
	}
	f.Model.Open("all-four")
	res := succeeded(t, f.WaitDone(id))
	workers := map[string]bool{}
	for _, c := range children(t, f, id) {
		workers[c.WorkerID] = true
	}
	for i := range 4 {
		if !strings.Contains(res.FinalText, fmt.Sprintf("child-%d", i)) {
			t.Fatalf("parent result lacks child %d:\n%s", i, res.FinalText)
		}
		if _, err := os.Stat(filepath.Join(dir, fmt.Sprintf("c%d.txt", i))); err != nil {
			t.Fatal(err)
		}
	}
	if len(workers) != 2 {
		t.Fatalf("children ran on %v, want both workers", workers)
	}
}

// TestLocalChildrenRunOnTheParentsWorker: children of a parent with a local
// workspace run on its worker and see its files.
func TestLocalChildrenRunOnTheParentsWorker(t *testing.T) {
	t.Parallel()
	f := fleettest.Start(t, fleettest.Options{Workers: 2, Slots: 2})
	kid := []fleettest.Step{{Calls: []fleettest.Call{fleettest.Shell("cat note.txt")}}, {Text: "read {{results}}"}}
	steps := append([]fleettest.Step{{Calls: []fleettest.Call{fleettest.Shell("echo secret-of-the-parent > note.txt")}}},
		fanOut([][]fleettest.Step{kid, kid, kid})...)
	id := f.Submit(fleettest.Spec("local parent", steps...))
	parent := f.WaitDone(id)
	res := succeeded(t, parent)
	if strings.Count(res.FinalText, "secret-of-the-parent") != 3 {
		t.Fatalf("children did not all read the parent's file:\n%s", res.FinalText)
	}
	for _, c := range children(t, f, id) {
		if c.WorkerID != parent.WorkerID {
			t.Fatalf("child ran on %s, parent on %s", c.WorkerID, parent.WorkerID)
		}
	}
}

// TestChildrenEndingTogetherWakeParentOnce: the parent waits for two
// children in one round; they end together and it is resumed once.
func TestChildrenEndingTogetherWakeParentOnce(t *testing.T) {
	t.Parallel()
	f := fleettest.Start(t, fleettest.Options{Workers: 2, Slots: 2})
	kid := []fleettest.Step{{Gate: "together", Text: "same instant"}}
	steps := fanOut([][]fleettest.Step{kid, kid})
	id := f.Submit(sharedSpec(t, "pair", steps...))
	if err := f.Model.WaitArrivals(waitCtx(t), "together", 2); err != nil {
		t.Fatal(err)
	}
	f.WaitState(id, store.TaskWaiting)
	f.Model.Open("together")
	parent := f.WaitDone(id)
	succeeded(t, parent)
	if parent.Attempts != 2 {
		t.Fatalf("parent claimed %d times, want 2 (start, one resume)", parent.Attempts)
	}
	if n := f.Model.Requests(fleettest.Prompt("pair", steps...), 2); n != 1 {
		t.Fatalf("the parent's final step was asked %d times", n)
	}
}

// TestCancelRootCancelsTree: cancelling the root mid-run cancels every
// descendant, and no child starts after the cancel.
func TestCancelRootCancelsTree(t *testing.T) {
	t.Parallel()
	f := fleettest.Start(t, fleettest.Options{Workers: 2, Slots: 2})
	grandkid := []fleettest.Step{{Gate: "tree", Text: "never"}}
	kid := fanOut([][]fleettest.Step{grandkid})
	kid[0].Calls = append(kid[0].Calls, fleettest.Call{Name: "shell", Args: map[string]any{"command": "true"}})
	var kids [][]fleettest.Step
	for range 6 {
		kids = append(kids, kid)
	}
	spec := sharedSpec(t, "tree", fanOut(kids)...)
	depth := 2
	spec.MaxSubagentDepth = &depth
	id := f.Submit(spec)
	if err := f.Model.WaitArrivals(waitCtx(t), "tree", 2); err != nil {
		t.Fatal(err)
	}
	if _, err := (&taskops.Completer{Store: f.Store, Queue: f.Queue}).CancelTree(waitCtx(t), id, "stop it"); err != nil {
		t.Fatal(err)
	}
	cancelAt := time.Now() // the cancel is committed: no claim may succeed after this
	f.Model.Open("tree")
	// A session still running at the cancel may spawn a grandchild before
	// its abort arrives: read the tree again until every task in it ended.
	checked := map[uuid.UUID]bool{}
	var tree []store.Task
	for {
		var err error
		tree, err = f.Store.TaskTree(waitCtx(t), store.TaskTreeParams{RootID: id})
		if err != nil {
			t.Fatal(err)
		}
		grew := false
		for _, task := range tree {
			if checked[task.ID] {
				continue
			}
			grew, checked[task.ID] = true, true
			done := f.WaitDone(task.ID)
			if done.State != store.TaskCancelled {
				t.Fatalf("task %s (depth %d) ended %s", task.ID, task.Depth, done.State)
			}
			if !done.StartedAt.IsZero() && done.StartedAt.After(cancelAt) {
				t.Fatalf("task %s started at %s, after the cancel at %s", task.ID, done.StartedAt, cancelAt)
			}
		}
		if !grew {
			break
		}
	}
	if len(tree) < 3 {
		t.Fatalf("tree has %d tasks; the test wants grandchildren", len(tree))
	}
	// Every worker is free again.
	succeeded(t, f.WaitDone(f.Submit(fleettest.Spec("after", fleettest.Step{Text: "ok"}))))
}

// TestChildOfCancelledParentNeverStarts: a child created under a parent
// that is already cancelled (a session spawned it before its abort arrived)
// is refused by the store and cancelled unstarted by the worker that gets
// its start message.
func TestChildOfCancelledParentNeverStarts(t *testing.T) {
	t.Parallel()
	f := fleettest.Start(t, fleettest.Options{Workers: 1, Slots: 1})
	ctx := waitCtx(t)
	body := func(title string) []byte {
		b, err := json.Marshal(fleettest.Spec(title, fleettest.Step{Text: "should never run"}).WithDefaults())
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	parent, err := f.Store.CreateTask(ctx, store.CreateTaskParams{Spec: body("parent")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Store.CancelSubtree(ctx, store.CancelSubtreeParams{ID: parent.Task.ID, Reason: "stop it"}); err != nil {
		t.Fatal(err)
	}
	child, err := f.Store.CreateTask(ctx, store.CreateTaskParams{ParentID: parent.Task.ID, Spec: body("late child")})
	if err != nil {
		t.Fatal(err)
	}
	msg := queue.TaskMessage{Type: queue.MsgStart, TaskID: child.Task.ID.String()}
	if _, err := f.Queue.Enqueue(ctx, child.Task.Queue, msg, "start:"+child.Task.ID.String()); err != nil {
		t.Fatal(err)
	}
	done := f.WaitDone(child.Task.ID)
	if done.State != store.TaskCancelled || done.Error != fleet.ReasonParentCancelled || !done.StartedAt.IsZero() {
		t.Fatalf("late child ended %s (error %q, started %v), want cancelled unstarted with %q",
			done.State, done.Error, done.StartedAt, fleet.ReasonParentCancelled)
	}
	if n := f.Model.Requests(fleettest.Prompt("late child", fleettest.Step{Text: "should never run"}), 0); n != 0 {
		t.Fatalf("the late child's model was called %d times", n)
	}
	// The worker is free again: the message was settled.
	succeeded(t, f.WaitDone(f.Submit(fleettest.Spec("after", fleettest.Step{Text: "ok"}))))
}

// TestParentWorkerKilled: the worker holding the parent dies while the
// parent is parked, and (in a second tree) while it runs; the trees
// complete on the other worker.
func TestParentWorkerKilled(t *testing.T) {
	t.Parallel()
	for _, when := range []string{"parked", "running"} {
		t.Run(when, func(t *testing.T) {
			t.Parallel()
			f := fleettest.Start(t, fleettest.Options{Workers: 2, Slots: 2})
			kid := []fleettest.Step{{Gate: "kid-" + when, Text: "child finished"}}
			steps := fanOut([][]fleettest.Step{kid, kid})
			if when == "running" {
				// After the children are done the parent is held in its final model call.
				steps[2].Gate = "parent-" + when
			}
			id := f.Submit(sharedSpec(t, "killed "+when, steps...))
			if err := f.Model.WaitArrivals(waitCtx(t), "kid-"+when, 2); err != nil {
				t.Fatal(err)
			}
			parent := f.WaitState(id, store.TaskWaiting)
			holder := parent.WorkerID
			if when == "running" {
				f.Model.Open("kid-" + when)
				if err := f.Model.WaitArrivals(waitCtx(t), "parent-"+when, 1); err != nil {
					t.Fatal(err)
				}
				holder = f.Task(id).WorkerID
			}
			for _, w := range f.Workers() {
				if w.ID() == holder {
					w.Kill(t)
				}
			}
			f.Model.Open("kid-" + when)
			f.Model.Open("parent-" + when)
			res := succeeded(t, f.WaitDone(id))
			if strings.Count(res.FinalText, "child finished") != 2 {
				t.Fatalf("result %q", res.FinalText)
			}
			if final := f.Task(id); final.WorkerID == holder {
				t.Fatalf("finished on the killed worker %s", holder)
			}
		})
	}
}

// sendInputTo is a call to send_input for the N-th spawned agent.
func sendInputTo(agent int, message string) fleettest.Call {
	return fleettest.Call{Name: "send_input", Args: map[string]any{"agent_id": fmt.Sprintf("{{agent:%d}}", agent), "message": message}}
}

func waitFor(agent int) fleettest.Call {
	return fleettest.Call{Name: "wait", Args: map[string]any{"agent_id": fmt.Sprintf("{{agent:%d}}", agent)}}
}

// TestSendInputReopensEndedChild: send_input to a child that has ended
// reopens it (succeeded -> queued); the child answers the input as a new
// round of its conversation, ends again, and the parent waiting for it is
// woken with the second answer. The child's events continue its seq with a
// second final SESSION_END.
func TestSendInputReopensEndedChild(t *testing.T) {
	t.Parallel()
	f := fleettest.Start(t, fleettest.Options{Workers: 2, Slots: 2})
	ctx := waitCtx(t)
	kid := []fleettest.Step{{Text: "first answer"}, {Gate: "second-round", Text: "second answer, about: {{last_user}}"}}
	steps := []fleettest.Step{
		{Calls: []fleettest.Call{fleettest.Spawn("reopened kid", kid...)}},
		{Calls: []fleettest.Call{waitFor(0)}},
		{Calls: []fleettest.Call{sendInputTo(0, "now check the docs too")}},
		{Calls: []fleettest.Call{waitFor(0)}},
		{Text: "parent saw:\n{{results}}"},
	}
	id := f.Submit(fleettest.Spec("reopen parent", steps...))
	sub, err := f.Queue.SubscribeEvents(ctx, queue.EventFilter{RootTaskID: id.String()}, queue.FromStart())
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Stop()
	// The reopened child is held in its second model call: the parent's
	// second wait parks it, and the child's second end must wake it.
	if err := f.Model.WaitArrivals(ctx, "second-round", 1); err != nil {
		t.Fatal(err)
	}
	f.WaitState(id, store.TaskWaiting)
	f.Model.Open("second-round")
	res := succeeded(t, f.WaitDone(id))
	if !strings.Contains(res.FinalText, "first answer") || !strings.Contains(res.FinalText, "second answer, about: now check the docs too") {
		t.Fatalf("parent result lacks an answer of the child:\n%s", res.FinalText)
	}
	kids := children(t, f, id)
	if len(kids) != 1 {
		t.Fatalf("%d children, want 1", len(kids))
	}
	child := kids[0]
	if r := succeeded(t, child); !strings.HasPrefix(r.FinalText, "second answer") || r.TurnsUsed != 2 {
		t.Fatalf("child result after the reopen: %+v", r)
	}
	if child.Attempts != 2 {
		t.Fatalf("child claimed %d times, want 2 (start, reopen)", child.Attempts)
	}
	turns, err := f.Store.LoadTurns(ctx, store.LoadTurnsParams{SessionID: child.ID})
	if err != nil {
		t.Fatal(err)
	}
	var kinds, texts []string
	for _, tr := range turns {
		var turn agent.Turn
		if err := json.Unmarshal(tr.Payload, &turn); err != nil {
			t.Fatal(err)
		}
		kinds, texts = append(kinds, tr.Kind), append(texts, turn.Text)
	}
	if got := strings.Join(kinds, ","); got != "user,assistant,user,assistant" {
		t.Fatalf("child turn kinds %s (texts %q)", got, texts)
	}
	if texts[1] != "first answer" || texts[2] != "now check the docs too" || !strings.HasPrefix(texts[3], "second answer") {
		t.Fatalf("child turns %q", texts)
	}
	// The child's events: gapless seq over both runs, two final SESSION_ENDs.
	var seqs []uint64
	for ends := 0; ends < 2; {
		ev, err := sub.Next(ctx)
		if err != nil {
			t.Fatalf("child events after %d session ends (seqs %v): %v", ends, seqs, err)
		}
		if ev.SessionID != child.ID.String() {
			continue
		}
		seqs = append(seqs, ev.Seq)
		if ev.Kind == fleet.KindSessionEnd {
			ends++
		}
	}
	for i, s := range seqs {
		if s != uint64(i+1) {
			t.Fatalf("child event seqs %v are not 1, 2, 3...", seqs)
		}
	}
}

// TestSendInputToCancelledChildIsRefused: a cancelled child stays
// cancelled; send_input tells the model to spawn a new subagent.
func TestSendInputToCancelledChildIsRefused(t *testing.T) {
	t.Parallel()
	f := fleettest.Start(t, fleettest.Options{Workers: 1, Slots: 2})
	steps := []fleettest.Step{
		{Calls: []fleettest.Call{fleettest.Spawn("doomed kid", fleettest.Step{Gate: "doomed-kid", Text: "never"})}},
		{Calls: []fleettest.Call{{Name: "close_agent", Args: map[string]any{"agent_id": "{{agent:0}}"}}}},
		{Calls: []fleettest.Call{sendInputTo(0, "are you there?")}},
		{Text: "parent saw:\n{{results}}"},
	}
	id := f.Submit(fleettest.Spec("cancelled kid parent", steps...))
	res := succeeded(t, f.WaitDone(id))
	if !strings.Contains(res.FinalText, "was cancelled and cannot take input; spawn a new subagent") {
		t.Fatalf("send_input to a cancelled child was not refused:\n%s", res.FinalText)
	}
	child := children(t, f, id)[0]
	if child = f.WaitDone(child.ID); child.State != store.TaskCancelled {
		t.Fatalf("child is %s, want cancelled", child.State)
	}
	arts, err := f.Store.ListArtifacts(waitCtx(t), store.ListArtifactsParams{TaskID: child.ID})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range arts {
		if a.Kind == "input" {
			t.Fatalf("an input was stored for the cancelled child: %+v", a)
		}
	}
}

// childTurnTexts returns the kinds and texts of a child's stored turns.
func childTurnTexts(t *testing.T, f *fleettest.Fleet, child uuid.UUID) (kinds, texts []string) {
	t.Helper()
	turns, err := f.Store.LoadTurns(waitCtx(t), store.LoadTurnsParams{SessionID: child})
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range turns {
		var turn agent.Turn
		if err := json.Unmarshal(tr.Payload, &turn); err != nil {
			t.Fatal(err)
		}
		kinds, texts = append(kinds, tr.Kind), append(texts, turn.Text)
	}
	return kinds, texts
}

// TestSendInputDuringFinalAnswer: input that reaches a child while its
// model gives the final answer is steering the loop has no round left for;
// the run answers it as a new input instead of ending without it.
func TestSendInputDuringFinalAnswer(t *testing.T) {
	t.Parallel()
	f := fleettest.Start(t, fleettest.Options{Workers: 2, Slots: 2})
	ctx := waitCtx(t)
	kid := []fleettest.Step{{Gate: "final-answer", Text: "first answer"}, {Text: "second, about: {{last_user}}"}}
	steps := []fleettest.Step{
		{Calls: []fleettest.Call{fleettest.Spawn("busy kid", kid...)}},
		{Gate: "send", Calls: []fleettest.Call{sendInputTo(0, "mind the edge case")}},
		{Gate: "after-send", Calls: []fleettest.Call{waitFor(0)}},
		{Text: "parent saw:\n{{results}}"},
	}
	id := f.Submit(fleettest.Spec("steer at the end", steps...))
	if err := f.Model.WaitArrivals(ctx, "final-answer", 1); err != nil {
		t.Fatal(err)
	}
	f.Model.Open("send") // the child is inside its final model call
	if err := f.Model.WaitArrivals(ctx, "after-send", 1); err != nil {
		t.Fatal(err)
	}
	f.Model.Open("final-answer")
	f.Model.Open("after-send")
	res := succeeded(t, f.WaitDone(id))
	if !strings.Contains(res.FinalText, "second, about: mind the edge case") {
		t.Fatalf("the child never answered the input:\n%s", res.FinalText)
	}
	child := children(t, f, id)[0]
	if child.Attempts != 1 {
		t.Fatalf("child claimed %d times, want 1: the same run answers the input", child.Attempts)
	}
	kinds, texts := childTurnTexts(t, f, child.ID)
	if got := strings.Join(kinds, ","); got != "user,assistant,user,assistant" || texts[2] != "mind the edge case" {
		t.Fatalf("child turns %s %q", got, texts)
	}
}

// TestPinnedWorkOfAKilledWorkerMoves: a parent in a local workspace pins
// its child and its own resume to its worker. When that worker dies for
// good, the other worker finds the work stranded on the dead worker's
// subject (its consumer gone after WorkerInactiveThreshold) and moves it to
// the shared queue. The child's files were in the dead worker's workspace,
// so it fails saying so; the parent resumes on the survivor and gets that
// answer, to spawn the child again if it wants.
func TestPinnedWorkOfAKilledWorkerMoves(t *testing.T) {
	t.Parallel()
	f := fleettest.Start(t, fleettest.Options{Workers: 1, Slots: 2, Queue: queue.Config{WorkerInactiveThreshold: time.Second}})
	kid := []fleettest.Step{{Gate: "stranded-kid", Text: "child finished"}}
	steps := []fleettest.Step{
		{Calls: []fleettest.Call{fleettest.Spawn("pinned kid", kid...)}},
		{Calls: []fleettest.Call{waitFor(0)}},
		{Text: "parent saw:\n{{results}}"},
	}
	id := f.Submit(fleettest.Spec("pinned parent", steps...))
	if err := f.Model.WaitArrivals(waitCtx(t), "stranded-kid", 1); err != nil {
		t.Fatal(err)
	}
	dead := f.WaitState(id, store.TaskWaiting).WorkerID
	survivor := f.StartWorker()
	f.Workers()[0].Kill(t)
	f.Model.Open("stranded-kid")
	res := succeeded(t, f.WaitDone(id))
	if !strings.Contains(res.FinalText, "the files of a worker that is gone are lost with it") {
		t.Fatalf("the parent did not learn why its child failed:\n%s", res.FinalText)
	}
	for _, task := range append(children(t, f, id), f.Task(id)) {
		if task.WorkerID != survivor.ID() {
			t.Fatalf("task %s ended on %q, want the survivor %s (the dead one was %s)", task.ID, task.WorkerID, survivor.ID(), dead)
		}
	}
}

// TestWorkOfAHeartbeatingWorkerStays: a worker whose consumer is gone but
// which heartbeats a running task is busy, not gone (every slot taken, it
// does not pull): its pinned work stays, while a gone worker's is moved and
// run.
func TestWorkOfAHeartbeatingWorkerStays(t *testing.T) {
	t.Parallel()
	f := fleettest.Start(t, fleettest.Options{Workers: 1, Queue: queue.Config{WorkerInactiveThreshold: time.Second}})
	ctx := waitCtx(t)
	create := func(title string) uuid.UUID {
		body, _ := json.Marshal(fleettest.Spec(title, fleettest.Step{Text: title + " done"}).WithDefaults())
		res, err := f.Store.CreateTask(ctx, store.CreateTaskParams{Spec: body})
		if err != nil {
			t.Fatal(err)
		}
		return res.Task.ID
	}
	// w-busy runs a task and keeps its heartbeat fresh until the test ends.
	running := create("busy worker's session")
	if _, err := f.Store.ClaimTask(ctx, store.ClaimTaskParams{ID: running, WorkerID: "w-busy"}); err != nil {
		t.Fatal(err)
	}
	beat, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for beat.Err() == nil {
			_, _ = f.Store.HeartbeatTask(beat, store.HeartbeatTaskParams{ID: running, WorkerID: "w-busy"})
			select {
			case <-beat.Done():
			case <-tick.C:
			}
		}
	}()
	waiting, stranded := create("waits for the busy worker"), create("stranded")
	for worker, id := range map[string]uuid.UUID{"w-busy": waiting, "w-gone": stranded} {
		if _, err := f.Queue.EnqueueToWorker(ctx, worker, queue.TaskMessage{Type: queue.MsgStart, TaskID: id.String()}, ""); err != nil {
			t.Fatal(err)
		}
	}
	succeeded(t, f.WaitDone(stranded)) // moved by a look that also saw w-busy's work
	orphaned, err := f.Queue.OrphanedWorkers(ctx)
	if err != nil || len(orphaned) != 1 || orphaned[0] != "w-busy" {
		t.Fatalf("OrphanedWorkers = %v, %v; want w-busy's work still there", orphaned, err)
	}
	if task := f.Task(waiting); task.State != store.TaskQueued {
		t.Fatalf("the busy worker's pinned task is %s, want queued", task.State)
	}
}

// TestInputStoredAsChildEndsReopensIt: input stored for a running child
// after its run read its inputs (a send_input whose control request found
// the session gone) reopens the child when that run ends, succeeded or
// failed, and the parent's wait returns the answer to it.
func TestInputStoredAsChildEndsReopensIt(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		kid  []fleettest.Step
	}{
		{"succeeded", []fleettest.Step{{Gate: "late", Text: "first answer"}, {Text: "second, about: {{last_user}}"}}},
		// The first request fails for good; the reopened run asks again and is answered.
		{"failed", []fleettest.Step{{Gate: "late", Fail: &sim.Failure{Kind: llm.ErrInvalidRequest},
			Text: "second, about: {{last_user}}"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := fleettest.Start(t, fleettest.Options{Workers: 2, Slots: 2})
			ctx := waitCtx(t)
			steps := []fleettest.Step{
				{Calls: []fleettest.Call{fleettest.Spawn("late kid", tc.kid...)}},
				{Calls: []fleettest.Call{waitFor(0)}},
				{Text: "parent saw:\n{{results}}"},
			}
			id := f.Submit(fleettest.Spec("late input", steps...))
			if err := f.Model.WaitArrivals(ctx, "late", 1); err != nil {
				t.Fatal(err)
			}
			child := children(t, f, id)[0]
			// Stored as the spawner stores input: an "input" artifact named by a UUIDv7.
			name, _ := uuid.NewV7()
			if _, err := f.Store.PutArtifact(ctx, store.PutArtifactParams{TaskID: child.ID, Kind: "input", Name: name.String(),
				ContentType: "text/plain; charset=utf-8", Content: []byte("one more thing")}); err != nil {
				t.Fatal(err)
			}
			f.WaitState(id, store.TaskWaiting) // parked: only the child's last end wakes it
			f.Model.Open("late")
			res := succeeded(t, f.WaitDone(id))
			if !strings.Contains(res.FinalText, "second, about: one more thing") || strings.Contains(res.FinalText, "first answer") {
				t.Fatalf("the parent's wait should return the answer to the late input:\n%s", res.FinalText)
			}
			if child = f.Task(child.ID); child.Attempts != 2 || child.State != store.TaskSucceeded {
				t.Fatalf("child %s after %d claims, want succeeded after 2 (start, reopen)", child.State, child.Attempts)
			}
		})
	}
}

// TestSendInputResendsALostReopenMessage: a child left queued by a reopen
// whose message was never sent (the publish failed after the reopen) runs
// again when the parent sends input once more, and answers it.
func TestSendInputResendsALostReopenMessage(t *testing.T) {
	t.Parallel()
	f := fleettest.Start(t, fleettest.Options{Workers: 2, Slots: 2})
	ctx := waitCtx(t)
	kid := []fleettest.Step{{Text: "first answer"}, {Text: "second, about: {{last_user}}"}}
	steps := []fleettest.Step{
		{Calls: []fleettest.Call{fleettest.Spawn("stranded kid", kid...)}},
		{Calls: []fleettest.Call{waitFor(0)}},
		{Gate: "resend", Calls: []fleettest.Call{sendInputTo(0, "are you there?")}},
		{Calls: []fleettest.Call{waitFor(0)}},
		{Text: "parent saw:\n{{results}}"},
	}
	id := f.Submit(fleettest.Spec("resend parent", steps...))
	if err := f.Model.WaitArrivals(ctx, "resend", 1); err != nil {
		t.Fatal(err)
	}
	child := f.WaitState(children(t, f, id)[0].ID, store.TaskSucceeded)
	// What a reopen whose publish failed leaves: queued, no message.
	if _, err := f.Store.TransitionTask(ctx, store.TransitionTaskParams{ID: child.ID, From: store.TaskSucceeded, To: store.TaskQueued}); err != nil {
		t.Fatal(err)
	}
	f.Model.Open("resend")
	res := succeeded(t, f.WaitDone(id))
	if !strings.Contains(res.FinalText, "second, about: are you there?") {
		t.Fatalf("the stranded child never answered the input:\n%s", res.FinalText)
	}
	if child = f.Task(child.ID); child.Attempts != 2 {
		t.Fatalf("child claimed %d times, want 2 (start, resend)", child.Attempts)
	}
}

// TestReopenRespectsTheLiveChildrenCap: reopening an ended child makes it
// live again, so it counts against max_live_children like a spawn.
func TestReopenRespectsTheLiveChildrenCap(t *testing.T) {
	t.Parallel()
	f := fleettest.Start(t, fleettest.Options{Workers: 1, Slots: 3})
	t.Cleanup(func() { f.Model.Open("hold-b") })
	steps := []fleettest.Step{
		{Calls: []fleettest.Call{fleettest.Spawn("kid a", fleettest.Step{Text: "a done"})}},
		{Calls: []fleettest.Call{waitFor(0)}},
		{Calls: []fleettest.Call{fleettest.Spawn("kid b", fleettest.Step{Gate: "hold-b", Text: "b done"})}},
		{Calls: []fleettest.Call{sendInputTo(0, "again")}},
		{Text: "parent saw:\n{{results}}"},
	}
	spec := fleettest.Spec("capped reopen", steps...)
	spec.MaxLiveChildren = 1
	res := succeeded(t, f.WaitDone(f.Submit(spec)))
	if !strings.Contains(res.FinalText, "cannot give input to ended subagent") || !strings.Contains(res.FinalText, "limit is 1") {
		t.Fatalf("send_input over the cap was not refused:\n%s", res.FinalText)
	}
}

// A child takes its parent's limits for those its spawn call leaves unset,
// so a spawned tree is as bounded as the task that started it.
func TestChildInheritsItsParentsLimits(t *testing.T) {
	t.Parallel()
	f := fleettest.Start(t, fleettest.Options{Workers: 1, Slots: 2})
	kid := []fleettest.Step{{Text: "child done"}}
	spec := fleettest.Spec("limited parent", fanOut([][]fleettest.Step{kid})...)
	spec.Limits = fleet.Limits{MaxTurns: 9, WallTime: fleet.Duration(time.Hour), MaxTokens: 123456}
	id := f.Submit(spec)
	succeeded(t, f.WaitDone(id))
	kids := children(t, f, id)
	if len(kids) != 1 {
		t.Fatalf("%d children, want 1", len(kids))
	}
	got, err := fleet.DecodeSpec(kids[0].Spec)
	if err != nil {
		t.Fatal(err)
	}
	if got.Limits != spec.Limits {
		t.Fatalf("child limits %+v, want the parent's %+v", got.Limits, spec.Limits)
	}
}

// TestChildSpecLeavesTheWorkersLiveChildrenDefaultOut: the worker's
// max_live_children caps a parent whose spec sets none, but is not
// written into its children's specs: each child takes the default of the
// worker that runs it.
func TestChildSpecLeavesTheWorkersLiveChildrenDefaultOut(t *testing.T) {
	t.Parallel()
	f := fleettest.Start(t, fleettest.Options{Workers: 1, Slots: 3,
		Worker: func(_ int, c *worker.Config) { c.MaxLiveChildren = 1 }})
	t.Cleanup(func() { f.Model.Open("hold-live") })
	steps := []fleettest.Step{
		{Calls: []fleettest.Call{fleettest.Spawn("kid a", fleettest.Step{Gate: "hold-live", Text: "a done"})}},
		{Calls: []fleettest.Call{fleettest.Spawn("kid b", fleettest.Step{Text: "b done"})}},
		{Text: "parent saw:\n{{results}}"},
	}
	id := f.Submit(fleettest.Spec("default cap", steps...))
	res := succeeded(t, f.WaitDone(id))
	if !strings.Contains(res.FinalText, "limit is 1") {
		t.Fatalf("the second spawn was not refused by the worker's cap:\n%s", res.FinalText)
	}
	kids := children(t, f, id)
	if len(kids) != 1 {
		t.Fatalf("%d children, want 1", len(kids))
	}
	got, err := fleet.DecodeSpec(kids[0].Spec)
	if err != nil {
		t.Fatal(err)
	}
	if got.MaxLiveChildren != 0 {
		t.Fatalf("the child's spec has max_live_children %d, want 0 (the worker's default is not the spec's)", got.MaxLiveChildren)
	}
}
