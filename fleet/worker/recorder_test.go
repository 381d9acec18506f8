package worker_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/agentfleet/agentfleet/agent"
	"github.com/agentfleet/agentfleet/fleet/fleettest"
	"github.com/agentfleet/agentfleet/store"
)

// writeLog records which store writes a worker makes.
type writeLog struct {
	store.Store
	mu    sync.Mutex
	calls []string
}

func (l *writeLog) note(call string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = append(l.calls, call)
}

func (l *writeLog) list() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.calls...)
}

func (l *writeLog) ClaimTask(ctx context.Context, p store.ClaimTaskParams) (store.Task, error) {
	l.note("ClaimTask")
	return l.Store.ClaimTask(ctx, p)
}

func (l *writeLog) CreateSession(ctx context.Context, p store.CreateSessionParams) (store.Session, error) {
	l.note("CreateSession")
	return l.Store.CreateSession(ctx, p)
}

func (l *writeLog) UpdateSession(ctx context.Context, p store.UpdateSessionParams) (store.Session, error) {
	l.note("UpdateSession")
	return l.Store.UpdateSession(ctx, p)
}

func (l *writeLog) AppendTurns(ctx context.Context, p store.AppendTurnsParams) ([]store.Turn, error) {
	l.note("AppendTurns")
	return l.Store.AppendTurns(ctx, p)
}

func (l *writeLog) TransitionTask(ctx context.Context, p store.TransitionTaskParams) (store.Task, error) {
	if p.Append != nil {
		l.note("TransitionTask+Append")
	} else {
		l.note("TransitionTask")
	}
	return l.Store.TransitionTask(ctx, p)
}

// startLogged starts a one-worker fleet whose worker's writes are logged.
func startLogged(t *testing.T) (*fleettest.Fleet, *writeLog) {
	log := &writeLog{}
	f := fleettest.Start(t, fleettest.Options{Workers: 1, WorkerStore: func(st store.Store) store.Store {
		log.Store = st
		return log
	}})
	return f, log
}

// TestOneRoundTaskIsTwoWrites checks the turn recorder's held turns: a task
// answered in one model call costs its worker a claim and one combined
// write (session row, prompt, answer and the end), and the store then
// holds all of it.
func TestOneRoundTaskIsTwoWrites(t *testing.T) {
	t.Parallel()
	f, log := startLogged(t)
	id := f.Submit(fleettest.Spec("say hi", fleettest.Step{Text: "hi"}))
	res := succeeded(t, f.WaitDone(id))
	if res.FinalText != "hi" || res.Usage.InputTokens != 100 {
		t.Fatalf("result %+v", res)
	}
	if got := log.list(); len(got) != 2 || got[0] != "ClaimTask" || got[1] != "TransitionTask+Append" {
		t.Fatalf("the worker's writes were %v, want [ClaimTask TransitionTask+Append]", got)
	}
	sess, err := f.Store.GetSession(waitCtx(t), store.GetSessionParams{ID: id})
	if err != nil || sess.TaskID != id || sess.LastSeq != 2 || sess.Usage.InputTokens != 100 || sess.Usage.OutputTokens != 20 {
		t.Fatalf("session %+v: %v", sess, err)
	}
	turns, err := f.Store.LoadTurns(waitCtx(t), store.LoadTurnsParams{SessionID: id})
	if err != nil || len(turns) != 2 {
		t.Fatalf("turns %+v: %v", turns, err)
	}
	var answer agent.Turn
	if err := json.Unmarshal(turns[1].Payload, &answer); err != nil || answer.Kind != agent.TurnAssistant || answer.Text != "hi" {
		t.Fatalf("second turn %s: %v", turns[1].Payload, err)
	}
}

// TestToolRoundTaskWrites checks that holding answers delays no turn that
// precedes an effect: the assistant turn with a tool call is written at
// once (creating the session), as are the tool results; only the final
// answer rides with the end.
func TestToolRoundTaskWrites(t *testing.T) {
	t.Parallel()
	f, log := startLogged(t)
	id := f.Submit(fleettest.Spec("run it",
		fleettest.Step{Calls: []fleettest.Call{fleettest.Shell("echo ran")}},
		fleettest.Step{Text: "done"}))
	succeeded(t, f.WaitDone(id))
	want := []string{"ClaimTask", "AppendTurns", "AppendTurns", "TransitionTask+Append"}
	got := log.list()
	if len(got) != len(want) {
		t.Fatalf("the worker's writes were %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("the worker's writes were %v, want %v", got, want)
		}
	}
	turns, err := f.Store.LoadTurns(waitCtx(t), store.LoadTurnsParams{SessionID: id})
	if err != nil || len(turns) != 4 {
		t.Fatalf("turns %d: %v, want user, assistant, tool_results, assistant", len(turns), err)
	}
}
