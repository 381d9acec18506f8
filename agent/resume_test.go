package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/agentfleet/agentfleet/agent"
	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/tools"
)

// countTool counts its runs per call id.
func countTool(runs map[string]*atomic.Int32) tools.Tool {
	return tools.Tool{Name: "count", Mutates: true, Parameters: []byte(`{"type":"object"}`),
		Run: func(_ context.Context, c tools.Call) (tools.Output, error) {
			runs[c.ID].Add(1)
			return tools.Output{Text: "ran " + c.ID}, nil
		}}
}

func TestResumeRerunsOnlyUnrecordedToolCalls(t *testing.T) {
	runs := map[string]*atomic.Int32{"a": {}, "b": {}}
	rec := agent.NewMemoryRecorder()
	calls := []llm.ToolCall{{ID: "a", Name: "count", Arguments: []byte(`{}`)}, {ID: "b", Name: "count", Arguments: []byte(`{}`)}}
	b := setup(t, agent.Config{Recorder: rec}, newFakeClient(step{calls: calls}, step{text: "finished"}), countTool(runs))
	if _, err := b.s.Submit(ctx30(t), "count"); err != nil {
		t.Fatal(err)
	}
	// Simulate a crash after call "a"'s result was recorded but not "b"'s:
	// keep user + assistant, then a results turn with only "a".
	full, _ := rec.Load(context.Background(), b.s.ID())
	rec.Truncate(b.s.ID(), 2)
	partial := full[2]
	partial.Results = partial.Results[:1]
	if err := rec.Append(context.Background(), b.s.ID(), partial); err != nil {
		t.Fatal(err)
	}

	client := newFakeClient(step{text: "resumed and finished"})
	resumed, err := agent.Resume(ctx30(t), agent.Config{ID: b.s.ID(), Recorder: rec, Client: client,
		Profile: &testProfile{reg: tools.NewRegistry(countTool(runs)), window: 1 << 20}, Env: dirEnv{dir: b.dir}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(resumed.Abort)
	out, err := resumed.Continue(ctx30(t))
	if err != nil || out.Text != "resumed and finished" {
		t.Fatalf("Continue: %+v %v", out, err)
	}
	if runs["a"].Load() != 1 || runs["b"].Load() != 2 {
		t.Fatalf("runs a=%d b=%d, want 1 and 2", runs["a"].Load(), runs["b"].Load())
	}
	req := client.Requests()[0]
	toolMsg := req.Messages[3]
	if toolMsg.Role != llm.RoleTool || len(toolMsg.Content) != 2 {
		t.Fatalf("results of the round not merged into one message: %+v", toolMsg)
	}
	h, _ := rec.Load(context.Background(), b.s.ID())
	want := []agent.TurnKind{agent.TurnUser, agent.TurnAssistant, agent.TurnToolResults, agent.TurnToolResults, agent.TurnAssistant}
	if !slices.Equal(turnKinds(h), want) {
		t.Fatalf("recorded = %v", turnKinds(h))
	}
	// A finished history has nothing to continue.
	out, err = resumed.Continue(ctx30(t))
	if err != nil || out.Stop != agent.StopCompleted || len(client.Requests()) != 1 {
		t.Fatalf("second Continue: %+v %v", out, err)
	}
}

func TestResumeAfterUserTurnCallsModel(t *testing.T) {
	rec := agent.NewMemoryRecorder()
	id := "3f1e0d8e-0000-4000-8000-000000000001"
	if err := rec.Append(context.Background(), id, agent.Turn{Index: 0, Kind: agent.TurnUser, Text: "hello"}); err != nil {
		t.Fatal(err)
	}
	client := newFakeClient(step{text: "hi"})
	s, err := agent.Resume(ctx30(t), agent.Config{ID: id, Recorder: rec, Client: client,
		Profile: &testProfile{reg: tools.NewRegistry(), window: 1 << 20}, Env: dirEnv{dir: t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Abort)
	if out, err := s.Continue(ctx30(t)); err != nil || out.Text != "hi" {
		t.Fatalf("%+v %v", out, err)
	}
	if got := lastUserText(client.Requests()[0]); got != "hello" {
		t.Fatalf("request lacks the recorded input: %q", got)
	}
}

type failingRecorder struct{ agent.MemoryRecorder }

func (f *failingRecorder) Append(context.Context, string, agent.Turn) error {
	return errors.New("disk full")
}

func TestRecorderFailureClosesSession(t *testing.T) {
	b := setup(t, agent.Config{Recorder: &failingRecorder{}}, newFakeClient())
	_, err := b.s.Submit(ctx30(t), "hi")
	if err == nil || b.s.State() != agent.StateClosed {
		t.Fatalf("err %v state %s", err, b.s.State())
	}
}

// parkSpawner is a fleet-like Spawner: children run "elsewhere"; Wait parks
// until finished is set.
type parkSpawner struct {
	spawned  atomic.Int32
	finished atomic.Bool
}

func (p *parkSpawner) Spawn(_ context.Context, req agent.SpawnRequest) (agent.SubagentStatus, error) {
	p.spawned.Add(1)
	return agent.SubagentStatus{AgentID: "child-" + req.CallID, Status: agent.SubagentRunning}, nil
}
func (p *parkSpawner) SendInput(context.Context, string, string) error { return nil }
func (p *parkSpawner) Wait(_ context.Context, id string) (agent.SubagentResult, error) {
	if !p.finished.Load() {
		return agent.SubagentResult{}, agent.ErrParked
	}
	return agent.SubagentResult{AgentID: id, Status: agent.SubagentCompleted, Output: "child says hi", Success: true, TurnsUsed: 3}, nil
}
func (p *parkSpawner) Close(_ context.Context, id string) (agent.SubagentStatus, error) {
	return agent.SubagentStatus{AgentID: id, Status: agent.SubagentClosed}, nil
}
func (p *parkSpawner) CloseAll(context.Context) {}

func TestParkThenResumeCompletesWait(t *testing.T) {
	sp := &parkSpawner{}
	rec := agent.NewMemoryRecorder()
	calls := []llm.ToolCall{
		call("s1", "spawn_agent", map[string]string{"task": "write tests"}),
		call("w1", "wait", map[string]string{"agent_id": "child-s1"}),
	}
	b := setup(t, agent.Config{Recorder: rec, Spawner: sp}, newFakeClient(step{calls: calls}))
	out, err := b.s.Submit(ctx30(t), "delegate")
	if !errors.Is(err, agent.ErrParked) || out.Stop != agent.StopParked || b.s.State() != agent.StateIdle {
		t.Fatalf("%+v %v state %s", out, err, b.s.State())
	}
	b.waitEvent(t, agent.EventParked)
	h, _ := rec.Load(context.Background(), b.s.ID())
	if last := h[len(h)-1]; last.Kind != agent.TurnToolResults || len(last.Results) != 1 || last.Results[0].ToolCallID != "s1" {
		t.Fatalf("recorded before park: %+v", last)
	}

	sp.finished.Store(true)
	client := newFakeClient(step{text: "child done, reviewed"})
	resumed, err := agent.Resume(ctx30(t), agent.Config{ID: b.s.ID(), Recorder: rec, Spawner: sp, Client: client,
		Profile: &testProfile{reg: tools.NewRegistry(), window: 1 << 20}, Env: dirEnv{dir: b.dir}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(resumed.Abort)
	out, err = resumed.Continue(ctx30(t))
	if err != nil || out.Text != "child done, reviewed" {
		t.Fatalf("Continue: %+v %v", out, err)
	}
	if sp.spawned.Load() != 1 {
		t.Fatalf("spawned %d times, want 1 (spawn_agent must not re-run)", sp.spawned.Load())
	}
	msgs := client.Requests()[0].Messages
	toolMsg := msgs[len(msgs)-1]
	var res agent.SubagentResult
	if err := json.Unmarshal([]byte(toolMsg.Content[1].ToolResult.Content), &res); err != nil || res.Output != "child says hi" || res.TurnsUsed != 3 {
		t.Fatalf("wait result = %q (%v)", toolMsg.Content[1].ToolResult.Content, err)
	}
}

// blockingTool runs until its context ends, counting its runs; its second
// and later runs return at once.
func blockingTool(runs *atomic.Int32) tools.Tool {
	return tools.Tool{Name: "block", Parameters: []byte(`{"type":"object"}`),
		Run: func(ctx context.Context, c tools.Call) (tools.Output, error) {
			if runs.Add(1) > 1 {
				return tools.Output{Text: "done"}, nil
			}
			<-ctx.Done()
			return tools.Output{Text: "Exit code: -1 (canceled)", IsError: true}, nil
		}}
}

func TestAbortLeavesTheInterruptedRoundUnanswered(t *testing.T) {
	var runs atomic.Int32
	rec := agent.NewMemoryRecorder()
	b := setup(t, agent.Config{Recorder: rec},
		newFakeClient(step{calls: []llm.ToolCall{call("c1", "block", map[string]any{})}}), blockingTool(&runs))
	done := make(chan error, 1)
	go func() { _, err := b.s.Submit(ctx30(t), "go"); done <- err }()
	b.waitEvent(t, agent.EventToolCallStart)
	b.s.Abort()
	if err := <-done; !errors.Is(err, agent.ErrAborted) {
		t.Fatalf("Submit after Abort: %v, want ErrAborted", err)
	}
	h, _ := rec.Load(context.Background(), b.s.ID())
	if want := []agent.TurnKind{agent.TurnUser, agent.TurnAssistant}; !slices.Equal(turnKinds(h), want) {
		t.Fatalf("recorded %v, want %v (the aborted round unanswered)", turnKinds(h), want)
	}

	resumed, err := agent.Resume(ctx30(t), agent.Config{ID: b.s.ID(), Recorder: rec,
		Client:  newFakeClient(step{text: "finished"}),
		Profile: &testProfile{reg: tools.NewRegistry(blockingTool(&runs)), window: 1 << 20}, Env: dirEnv{dir: b.dir}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(resumed.Abort)
	if out, err := resumed.Continue(ctx30(t)); err != nil || out.Text != "finished" {
		t.Fatalf("Continue: %+v %v", out, err)
	}
	if runs.Load() != 2 {
		t.Fatalf("the interrupted call ran %d times, want 2 (again on resume)", runs.Load())
	}
	h, _ = rec.Load(context.Background(), b.s.ID())
	if res := h[2].Results; len(res) != 1 || res[0].IsError || res[0].Content != "done" {
		t.Fatalf("recorded result after resume = %+v, want the re-run's", res)
	}
}
