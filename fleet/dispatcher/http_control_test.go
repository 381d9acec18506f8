package dispatcher

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/api"
	"github.com/agentfleet/agentfleet/fleet/client"
	"github.com/agentfleet/agentfleet/internal/testenv"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/store"
)

// childTask stores a child of parent, as a worker's spawner would.
func childTask(t *testing.T, st store.Store, parent uuid.UUID) store.Task {
	t.Helper()
	spec, _ := json.Marshal(fleet.TaskSpec{Prompt: "child", Profile: "openai", ParentID: parent})
	res, err := st.CreateTask(context.Background(), store.CreateTaskParams{ParentID: parent, Spec: spec})
	if err != nil {
		t.Fatal(err)
	}
	return res.Task
}

// runTask claims a task as worker w1 and gives it its session, whose id
// is the task id as a worker's would be.
func runTask(t *testing.T, st store.Store, id uuid.UUID) store.Session {
	t.Helper()
	ctx := context.Background()
	if _, err := st.ClaimTask(ctx, store.ClaimTaskParams{ID: id, WorkerID: "w1"}); err != nil {
		t.Fatal(err)
	}
	s, err := st.CreateSession(ctx, store.CreateSessionParams{ID: id, TaskID: id, Profile: "openai", Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// serve answers control requests of a session, handing each to the returned channel.
func serve(t *testing.T, q *queue.Client, session uuid.UUID, reply queue.ControlReply) <-chan queue.ControlRequest {
	t.Helper()
	got := make(chan queue.ControlRequest, 8)
	stop, err := q.ServeControl(fleet.DefaultTenant, session.String(), func(_ context.Context, req queue.ControlRequest) queue.ControlReply {
		got <- req
		return reply
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stop() })
	return got
}

func receive(t *testing.T, ch <-chan queue.ControlRequest) queue.ControlRequest {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(testWait):
		t.Fatal("no control request reached the session")
		return queue.ControlRequest{}
	}
}

func TestAPICancelSubtree(t *testing.T) {
	bothStores(t, func(t *testing.T, mk storeMaker) {
		b := setupAPI(t, mk)
		ctx := context.Background()
		root, err := b.client.Submit(ctx, validSpec("parent"))
		if err != nil {
			t.Fatal(err)
		}
		running := childTask(t, b.st, root.Task.ID)
		queued := childTask(t, b.st, running.ID)
		sess := runTask(t, b.st, running.ID)
		aborts := serve(t, b.q, sess.ID, queue.ControlReply{OK: true})

		res, err := b.client.Cancel(ctx, root.Task.ID, "not needed")
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Cancelled) != 3 || res.Aborted != 1 {
			t.Fatalf("cancel answered %+v, want 3 cancelled and 1 aborted", res)
		}
		if req := receive(t, aborts); req.Op != queue.OpAbort {
			t.Fatalf("the running session got %q, want abort", req.Op)
		}
		for _, id := range []uuid.UUID{root.Task.ID, running.ID, queued.ID} {
			v, err := b.client.Get(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if v.State != store.TaskCancelled || v.Error != "not needed" {
				t.Fatalf("task %s is %s (%q) after the cancel, want cancelled", id, v.State, v.Error)
			}
		}
		// A worker pulling the queued descendant's message cannot start it.
		if _, err := b.st.ClaimTask(ctx, store.ClaimTaskParams{ID: queued.ID, WorkerID: "w2"}); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("claim of a cancelled task: %v, want ErrConflict", err)
		}
		code, d, raw := b.rawCall(t, http.MethodPost, "/v1/tasks/"+root.Task.ID.String()+"/cancel", nil, testToken)
		if code != http.StatusConflict || d.Code != api.CodeConflict || !strings.Contains(d.Message, "cancelled") {
			t.Fatalf("second cancel: %d %s, want 409", code, raw)
		}
		if code, _, raw := b.rawCall(t, http.MethodPost, "/v1/tasks/"+uuid.NewString()+"/cancel", nil, testToken); code != http.StatusNotFound {
			t.Fatalf("cancel of an unknown task: %d %s, want 404", code, raw)
		}
	})
}

func TestAPIControl(t *testing.T) {
	b := setupAPI(t, sqliteStore)
	ctx := context.Background()
	id := b.submit(t, "work")
	path := "/v1/tasks/" + id.String()
	// Queued: nothing runs to steer.
	code, d, raw := b.rawCall(t, http.MethodPost, path+"/steer", api.MessageRequest{Message: "hurry"}, testToken)
	if code != http.StatusConflict || d.Code != api.CodeNotRunning || !strings.Contains(d.Message, "is queued") {
		t.Fatalf("steer of a queued task: %d %s, want 409 not_running", code, raw)
	}
	sess := runTask(t, b.st, id)
	// Running in the store, but no worker serves the session.
	code, d, raw = b.rawCall(t, http.MethodPost, path+"/follow_up", api.MessageRequest{Message: "then this"}, testToken)
	if code != http.StatusConflict || d.Code != api.CodeNotRunning {
		t.Fatalf("follow_up with no worker: %d %s, want 409 not_running", code, raw)
	}
	reqs := serve(t, b.q, sess.ID, queue.ControlReply{OK: true, Status: &queue.SessionStatus{SessionID: sess.ID.String(), State: "processing"}})
	resp, err := b.client.Steer(ctx, id, "look at payments/ first")
	if err != nil {
		t.Fatal(err)
	}
	if got := receive(t, reqs); got.Op != queue.OpSteer || got.Message != "look at payments/ first" || !resp.OK || resp.Status.State != "processing" {
		t.Fatalf("steer delivered %+v, answered %+v", got, resp)
	}
	if _, err := b.client.FollowUp(ctx, id, "now the docs"); err != nil {
		t.Fatal(err)
	}
	if got := receive(t, reqs); got.Op != queue.OpFollowUp || got.Message != "now the docs" {
		t.Fatalf("follow_up delivered %+v", got)
	}
	if _, err := b.client.Configure(ctx, id, api.ConfigureRequest{ReasoningEffort: "high", Model: "gpt-x"}); err != nil {
		t.Fatal(err)
	}
	if got := receive(t, reqs); got.Op != queue.OpConfigure || got.ReasoningEffort != "high" || got.Model != "gpt-x" {
		t.Fatalf("configure delivered %+v", got)
	}
	if _, err := b.client.Configure(ctx, id, api.ConfigureRequest{CommandTimeout: fleet.Duration(2 * time.Minute)}); err != nil {
		t.Fatal(err)
	}
	if got := receive(t, reqs); got.Op != queue.OpConfigure || got.CommandTimeout != 2*time.Minute {
		t.Fatalf("configure of the command timeout delivered %+v", got)
	}
	if _, err := b.client.Compact(ctx, id); err != nil {
		t.Fatal(err)
	}
	if got := receive(t, reqs); got.Op != queue.OpCompact {
		t.Fatalf("compact delivered %+v", got)
	}
	for _, c := range []struct {
		path  string
		body  any
		field string
	}{
		{"/steer", api.MessageRequest{}, "message"},
		{"/steer", `{"msg":"x"}`, "body.msg"},
		{"/configure", api.ConfigureRequest{}, "reasoning_effort"},
		{"/configure", api.ConfigureRequest{ReasoningEffort: "max"}, "reasoning_effort"},
		{"/configure", `{"command_timeout":"10ms"}`, "command_timeout"},
		{"/configure", `{"command_timeout":"soon"}`, "body.command_timeout"},
	} {
		code, d, raw := b.rawCall(t, http.MethodPost, path+c.path, c.body, testToken)
		if code != http.StatusBadRequest || d.Field != c.field {
			t.Errorf("POST %s %v: %d %s, want 400 naming %s", c.path, c.body, code, raw, c.field)
		}
	}
	select {
	case r := <-reqs:
		t.Fatalf("an invalid request reached the session: %+v", r)
	default:
	}
}

func TestAPIControlRefused(t *testing.T) {
	b := setupAPI(t, sqliteStore)
	sub, err := b.client.Submit(context.Background(), validSpec("work"))
	if err != nil {
		t.Fatal(err)
	}
	sess := runTask(t, b.st, sub.Task.ID)
	serve(t, b.q, sess.ID, queue.ControlReply{Error: "session is closing"})
	code, d, raw := b.rawCall(t, http.MethodPost, "/v1/tasks/"+sub.Task.ID.String()+"/steer", api.MessageRequest{Message: "x"}, testToken)
	if code != http.StatusConflict || !strings.Contains(d.Message, "session is closing") {
		t.Fatalf("refused steer: %d %s, want 409 with the session's reason", code, raw)
	}
}

func TestAPISessionsTurnsArtifacts(t *testing.T) {
	bothStores(t, func(t *testing.T, mk storeMaker) {
		b := setupAPI(t, mk)
		ctx := context.Background()
		sub, err := b.client.Submit(ctx, validSpec("work"))
		if err != nil {
			t.Fatal(err)
		}
		sess := runTask(t, b.st, sub.Task.ID)
		turns := []store.NewTurn{
			{Seq: 1, Kind: "user", Payload: json.RawMessage(`{"text":"hi"}`)},
			{Seq: 2, Kind: "assistant", Payload: json.RawMessage(`{"text":"on it"}`)},
			{Seq: 3, Kind: "tool_results", Payload: json.RawMessage(`{"results":[]}`)},
		}
		if _, err := b.st.AppendTurns(ctx, store.AppendTurnsParams{SessionID: sess.ID, Turns: turns}); err != nil {
			t.Fatal(err)
		}
		if _, err := b.st.PutToolOutput(ctx, store.PutToolOutputParams{SessionID: sess.ID, CallID: "call_1", Tool: "shell", Output: "ok\n"}); err != nil {
			t.Fatal(err)
		}
		if _, err := b.st.PutArtifact(ctx, store.PutArtifactParams{TaskID: sub.Task.ID, Kind: "diff", ContentType: "text/x-diff", Content: []byte("--- a\n+++ b\n")}); err != nil {
			t.Fatal(err)
		}
		ss, err := b.client.Sessions(ctx, sub.Task.ID)
		if err != nil || len(ss.Sessions) != 1 || ss.Sessions[0].ID != sess.ID || ss.Sessions[0].LastSeq != 3 {
			t.Fatalf("sessions %+v, %v", ss, err)
		}
		code, _, raw := b.rawCall(t, http.MethodGet, "/v1/sessions/"+sess.ID.String()+"/turns?limit=2", nil, testToken)
		var page api.TurnList
		if err := json.Unmarshal(raw, &page); code != 200 || err != nil || len(page.Turns) != 2 || page.NextAfter != 2 {
			t.Fatalf("first turn page: %d %s", code, raw)
		}
		rest, err := b.client.Turns(ctx, sess.ID, page.NextAfter)
		if err != nil || len(rest.Turns) != 1 || rest.Turns[0].Kind != "tool_results" || rest.NextAfter != 0 {
			t.Fatalf("second turn page %+v, %v", rest, err)
		}
		out, err := b.client.ToolOutput(ctx, sess.ID, "call_1")
		if err != nil || out.Output != "ok\n" || out.Tool != "shell" {
			t.Fatalf("tool output %+v, %v", out, err)
		}
		if _, err := b.client.ToolOutput(ctx, sess.ID, "call_2"); !client.IsNotFound(err) {
			t.Fatalf("unknown call: %v, want 404", err)
		}
		arts, err := b.client.Artifacts(ctx, sub.Task.ID)
		if err != nil || len(arts.Artifacts) != 1 || arts.Artifacts[0].Kind != "diff" {
			t.Fatalf("artifacts %+v, %v", arts, err)
		}
		content, ctype, err := b.client.Artifact(ctx, sub.Task.ID, "diff", "")
		if err != nil || string(content) != "--- a\n+++ b\n" || ctype != "text/x-diff" {
			t.Fatalf("artifact %q %q %v", content, ctype, err)
		}
		if _, _, err := b.client.Artifact(ctx, sub.Task.ID, "log", ""); !client.IsNotFound(err) {
			t.Fatalf("unknown artifact: %v, want 404", err)
		}
		if _, err := b.client.Turns(ctx, uuid.New(), 0); !client.IsNotFound(err) {
			t.Fatalf("turns of an unknown session: %v, want 404", err)
		}
	})
}

func TestAPITree(t *testing.T) {
	b := setupAPI(t, sqliteStore)
	ctx := context.Background()
	root, err := b.client.Submit(ctx, validSpec("parent"))
	if err != nil {
		t.Fatal(err)
	}
	child := childTask(t, b.st, root.Task.ID)
	grandchild := childTask(t, b.st, child.ID)
	tree, err := b.client.Tree(ctx, grandchild.ID)
	if err != nil {
		t.Fatal(err)
	}
	if tree.RootID != root.Task.ID || len(tree.Tasks) != 3 || tree.Tasks[0].ID != root.Task.ID || tree.Tasks[2].ID != grandchild.ID || tree.Tasks[2].Depth != 2 {
		t.Fatalf("tree %+v", tree)
	}
	kids, err := b.client.List(ctx, client.ListFilter{Parent: root.Task.ID})
	if err != nil || len(kids.Tasks) != 1 || kids.Tasks[0].ID != child.ID {
		t.Fatalf("children %+v, %v", kids, err)
	}
}

// TestDispatcherDeadLettersFollowTheWorkersRule: a dead letter that the
// dispatcher's watcher handles ends its task exactly as a worker's watcher
// would (taskops.HandleDeadLetter): error dead_letter, and the result says
// what happened, with the term reason. The dispatcher used to write
// "dead_letter: <reason>" and no result, so which watcher won decided what
// the user saw.
func TestDispatcherDeadLettersFollowTheWorkersRule(t *testing.T) {
	b := setupAPI(t, sqliteStore)
	ctx, cancel := context.WithTimeout(context.Background(), testWait)
	defer cancel()
	sub, err := b.client.Submit(ctx, validSpec("poison"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := b.q.NewPuller(ctx, queue.PullerConfig{Queues: []string{fleet.DefaultQueue}, WorkerID: "w-test"})
	if err != nil {
		t.Fatal(err)
	}
	d, err := p.Pull(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Term(ctx, "the spec names a tool that does not exist"); err != nil {
		t.Fatal(err)
	}
	var v api.TaskView
	testenv.Eventually(t, testWait, "the dispatcher fails the dead-lettered task", func() bool {
		v, err = b.client.Get(ctx, sub.Task.ID)
		return err == nil && v.State.Terminal()
	})
	res, _ := v.TaskResult()
	if v.State != store.TaskFailed || v.Error != fleet.ReasonDeadLetter ||
		!strings.Contains(res.Error, "dead letter: terminated") || !strings.Contains(res.Error, "does not exist") {
		t.Fatalf("task after a dead letter: %s, error %q, result error %q; want failed, %q, the term reason in the result",
			v.State, v.Error, res.Error, fleet.ReasonDeadLetter)
	}
}
