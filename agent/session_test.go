package agent_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agentfleet/agentfleet/agent"
	"github.com/agentfleet/agentfleet/agent/compact"
	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/tools"
)

func TestNaturalCompletionEmitsEventsInOrder(t *testing.T) {
	b := setup(t, agent.Config{}, newFakeClient(step{text: "Hello there, all done."}))
	out, err := b.s.Submit(ctx30(t), "say hello")
	if err != nil {
		t.Fatal(err)
	}
	if out.Stop != agent.StopCompleted || out.State != agent.StateIdle || out.Text != "Hello there, all done." || out.Turns != 1 {
		t.Fatalf("outcome = %+v", out)
	}
	evs := b.waitEvent(t, agent.EventInputDone)
	got := slices.Compact(kinds(evs))
	want := []agent.EventKind{agent.EventSessionStart, agent.EventUserInput, agent.EventContextEstimate, agent.EventAssistantTextStart,
		agent.EventAssistantTextDelta, agent.EventAssistantTextEnd, agent.EventInputDone}
	if !slices.Equal(got, want) {
		t.Fatalf("events = %v, want %v", got, want)
	}
	for i, ev := range evs {
		if ev.Seq != uint64(i+1) || ev.SessionID != b.s.ID() || ev.Time.IsZero() {
			t.Fatalf("event %d: seq %d session %q time %v", i, ev.Seq, ev.SessionID, ev.Time)
		}
	}
	var deltas strings.Builder
	for _, ev := range evs {
		if ev.Kind == agent.EventAssistantTextDelta {
			deltas.WriteString(ev.Text)
		}
	}
	if deltas.String() != out.Text {
		t.Fatalf("deltas %q != text %q", deltas.String(), out.Text)
	}
}

func TestToolRoundRecordsTypedTurns(t *testing.T) {
	b := setup(t, agent.Config{}, newFakeClient(step{calls: []llm.ToolCall{call("c1", "echo", map[string]string{"text": "ping"})}}, step{text: "pong"}))
	if _, err := b.s.Submit(ctx30(t), "echo ping"); err != nil {
		t.Fatal(err)
	}
	h := b.s.History()
	want := []agent.TurnKind{agent.TurnUser, agent.TurnAssistant, agent.TurnToolResults, agent.TurnAssistant}
	if !slices.Equal(turnKinds(h), want) {
		t.Fatalf("history = %v", turnKinds(h))
	}
	if h[2].Results[0].Content != "ping" || h[2].Results[0].ToolCallID != "c1" {
		t.Fatalf("result = %+v", h[2].Results[0])
	}
	reqs := b.client.Requests()
	last := reqs[1].Messages[len(reqs[1].Messages)-1]
	if last.Role != llm.RoleTool || last.Content[0].ToolResult.Content != "ping" {
		t.Fatalf("second request does not end with the tool result: %+v", last)
	}
	if reqs[0].Messages[0].Role != llm.RoleSystem || !strings.Contains(reqs[0].Messages[0].Text(), "test agent") {
		t.Fatalf("no system prompt first: %+v", reqs[0].Messages[0])
	}
	if len(reqs[0].Tools) == 0 || reqs[0].Model != "test-model" {
		t.Fatalf("request lacks tools or model: %+v", reqs[0])
	}
	evs := b.waitEvent(t, agent.EventInputDone)
	for _, ev := range evs {
		if ev.Kind == agent.EventToolCallEnd && (ev.Output != "ping" || ev.CallID != "c1" || ev.ToolName != "echo") {
			t.Fatalf("TOOL_CALL_END = %+v", ev)
		}
	}
	if countKind(evs, agent.EventToolCallStart) != 1 || countKind(evs, agent.EventToolCallEnd) != 1 {
		t.Fatalf("events = %v", kinds(evs))
	}
}

func TestMultipleSequentialInputs(t *testing.T) {
	b := setup(t, agent.Config{}, newFakeClient(step{text: "one"}, step{text: "two"}))
	for i, want := range []string{"one", "two"} {
		out, err := b.s.Submit(ctx30(t), "input")
		if err != nil || out.Text != want {
			t.Fatalf("input %d: %+v %v", i, out, err)
		}
	}
	if n := len(b.client.Requests()[1].Messages); n != 4 { // system, user, assistant, user
		t.Fatalf("second request has %d messages, want 4", n)
	}
}

func TestRoundLimitStopsWithTurnLimitEvent(t *testing.T) {
	loop := step{fn: func(llm.Request) (*llm.Response, error) {
		return response("", llm.Usage{}, call("x", "echo", map[string]string{"text": "again"})), nil
	}}
	b := setup(t, agent.Config{Session: agent.SessionConfig{MaxToolRoundsPerInput: 2}}, newFakeClient(loop, loop, loop, loop))
	out, err := b.s.Submit(ctx30(t), "go")
	if err != nil || out.Stop != agent.StopRoundLimit || out.State != agent.StateIdle || out.Rounds != 2 {
		t.Fatalf("outcome %+v err %v", out, err)
	}
	evs := b.waitEvent(t, agent.EventTurnLimit)
	if evs[len(evs)-1].Round != 2 {
		t.Fatalf("TURN_LIMIT round = %d", evs[len(evs)-1].Round)
	}
}

func TestMaxTurnsAcrossInputs(t *testing.T) {
	b := setup(t, agent.Config{Session: agent.SessionConfig{MaxTurns: 2}}, newFakeClient(step{text: "a"}, step{text: "b"}, step{text: "c"}))
	for range 2 {
		if out, err := b.s.Submit(ctx30(t), "hi"); err != nil || out.Stop != agent.StopCompleted {
			t.Fatalf("%+v %v", out, err)
		}
	}
	out, err := b.s.Submit(ctx30(t), "hi")
	if err != nil || out.Stop != agent.StopTurnLimit || len(b.client.Requests()) != 2 {
		t.Fatalf("third input: %+v %v, %d requests", out, err, len(b.client.Requests()))
	}
	b.waitEvent(t, agent.EventTurnLimit)
}

func TestLoopDetectionInjectsSteeringWarning(t *testing.T) {
	same := step{calls: []llm.ToolCall{call("c", "echo", map[string]string{"text": "same"})}}
	client := newFakeClient(same, same, same, step{text: "ok, stopping"})
	b := setup(t, agent.Config{Session: agent.SessionConfig{LoopDetectionWindow: 3}}, client)
	if _, err := b.s.Submit(ctx30(t), "go"); err != nil {
		t.Fatal(err)
	}
	evs := b.waitEvent(t, agent.EventLoopDetection)
	if !strings.Contains(evs[len(evs)-1].Text, "Loop detected") {
		t.Fatalf("LOOP_DETECTION text = %q", evs[len(evs)-1].Text)
	}
	var steering []agent.Turn
	for _, tr := range b.s.History() {
		if tr.Kind == agent.TurnSteering {
			steering = append(steering, tr)
		}
	}
	if len(steering) != 1 || steering[0].Source != "loop_detection" {
		t.Fatalf("steering turns = %+v", steering)
	}
	reqs := client.Requests()
	if !strings.Contains(lastUserText(reqs[len(reqs)-1]), "Loop detected") {
		t.Fatal("the warning did not reach the model as a user message")
	}
}

func TestSteeringReachesNextRequest(t *testing.T) {
	started, gate := make(chan string, 1), make(chan struct{})
	client := newFakeClient(step{calls: []llm.ToolCall{{ID: "g", Name: "gate", Arguments: []byte(`{}`)}}}, step{text: "adjusted"})
	b := setup(t, agent.Config{}, client, gateTool("gate", true, started, gate))
	done := make(chan error, 1)
	go func() { _, err := b.s.Submit(context.Background(), "build it"); done <- err }()
	<-started
	if err := b.s.Steer("only a /health endpoint"); err != nil {
		t.Fatal(err)
	}
	close(gate)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	reqs := client.Requests()
	if got := lastUserText(reqs[1]); got != "only a /health endpoint" {
		t.Fatalf("second request's last user message = %q", got)
	}
	evs := b.waitEvent(t, agent.EventSteeringInjected)
	if evs[len(evs)-1].Text != "only a /health endpoint" {
		t.Fatal("STEERING_INJECTED lacks the text")
	}
	h := b.s.History()
	if h[3].Kind != agent.TurnSteering {
		t.Fatalf("history = %v", turnKinds(h))
	}
}

func TestSteerWhileIdleIsDeliveredOnNextSubmit(t *testing.T) {
	client := newFakeClient(step{text: "ok"})
	b := setup(t, agent.Config{}, client)
	if err := b.s.Steer("use tabs"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.s.Submit(ctx30(t), "format"); err != nil {
		t.Fatal(err)
	}
	if got := lastUserText(client.Requests()[0]); got != "use tabs" {
		t.Fatalf("last user text = %q", got)
	}
}

// TestSteerWhileBusyAndTakeSteering: an idle session refuses conditional
// steering; steering queued and never drained can be taken back.
func TestSteerWhileBusyAndTakeSteering(t *testing.T) {
	b := setup(t, agent.Config{}, newFakeClient(step{text: "ok"}))
	if ok, err := b.s.SteerWhileBusy("too late"); ok || err != nil {
		t.Fatalf("SteerWhileBusy on an idle session = %v, %v; want false, nil", ok, err)
	}
	if _, err := b.s.SteerWhileBusy(" "); !errors.Is(err, agent.ErrEmptyInput) {
		t.Fatalf("empty message: %v", err)
	}
	for _, m := range []string{"a", "b"} {
		if err := b.s.Steer(m); err != nil {
			t.Fatal(err)
		}
	}
	if got := b.s.TakeSteering(); len(got) != 2 || got[0] != "a" || got[1] != "b" {
		t.Fatalf("TakeSteering = %q", got)
	}
	if got := b.s.TakeSteering(); len(got) != 0 {
		t.Fatalf("second TakeSteering = %q, want nothing", got)
	}
}

func TestFollowUpRunsAfterCompletion(t *testing.T) {
	started, gate := make(chan string, 1), make(chan struct{})
	client := newFakeClient(step{calls: []llm.ToolCall{{ID: "g", Name: "gate", Arguments: []byte(`{}`)}}}, step{text: "first done"}, step{text: "second done"})
	b := setup(t, agent.Config{}, client, gateTool("gate", true, started, gate))
	done := make(chan agent.Outcome, 1)
	go func() { out, _ := b.s.Submit(context.Background(), "first"); done <- out }()
	<-started
	if err := b.s.FollowUp("now the second"); err != nil {
		t.Fatal(err)
	}
	close(gate)
	out := <-done
	if out.Text != "second done" || out.Turns != 3 {
		t.Fatalf("outcome %+v", out)
	}
	h := b.s.History()
	if h[len(h)-2].Kind != agent.TurnUser || h[len(h)-2].Text != "now the second" {
		t.Fatalf("history = %v", turnKinds(h))
	}
}

func TestReasoningEffortAndModelChangeTakeEffectNextCall(t *testing.T) {
	started, gate := make(chan string, 1), make(chan struct{})
	client := newFakeClient(step{calls: []llm.ToolCall{{ID: "g", Name: "gate", Arguments: []byte(`{}`)}}}, step{text: "ok"})
	b := setup(t, agent.Config{Session: agent.SessionConfig{ReasoningEffort: "low"}}, client, gateTool("gate", true, started, gate))
	done := make(chan error, 1)
	go func() { _, err := b.s.Submit(context.Background(), "think"); done <- err }()
	<-started
	if err := b.s.SetReasoningEffort("high"); err != nil {
		t.Fatal(err)
	}
	b.s.SetModel("bigger-model")
	close(gate)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	reqs := client.Requests()
	if reqs[0].ReasoningEffort != "low" || reqs[1].ReasoningEffort != "high" {
		t.Fatalf("efforts = %q, %q", reqs[0].ReasoningEffort, reqs[1].ReasoningEffort)
	}
	if reqs[0].Model != "test-model" || reqs[1].Model != "bigger-model" {
		t.Fatalf("models = %q, %q", reqs[0].Model, reqs[1].Model)
	}
	if reqs[1].ProviderOptions["test"]["effort"] != "high" {
		t.Fatal("provider options not rebuilt for the new effort")
	}
	if err := b.s.SetReasoningEffort("extreme"); err == nil {
		t.Fatal("invalid effort accepted")
	}
}

func TestAbortStopsToolsAndClosesSession(t *testing.T) {
	started := make(chan string, 1)
	client := newFakeClient(step{calls: []llm.ToolCall{{ID: "g", Name: "gate", Arguments: []byte(`{}`)}}})
	b := setup(t, agent.Config{}, client, gateTool("gate", true, started, nil))
	done := make(chan error, 1)
	go func() { _, err := b.s.Submit(context.Background(), "wait forever"); done <- err }()
	<-started
	b.s.Abort()
	if err := <-done; !errors.Is(err, agent.ErrAborted) {
		t.Fatalf("Submit err = %v, want ErrAborted", err)
	}
	if b.s.State() != agent.StateClosed {
		t.Fatalf("state = %s", b.s.State())
	}
	evs := b.waitEvent(t, agent.EventSessionEnd)
	if last := evs[len(evs)-1]; last.State != agent.StateClosed {
		t.Fatalf("SESSION_END state = %s", last.State)
	}
	if _, ok := b.sub.Next(ctx30(t)); ok {
		t.Fatal("events after SESSION_END")
	}
	if _, err := b.s.Submit(ctx30(t), "more"); !errors.Is(err, agent.ErrClosed) {
		t.Fatalf("Submit after close: %v", err)
	}
	b.s.Abort() // twice is fine
}

func TestUnrecoverableErrorsCloseSession(t *testing.T) {
	noCompaction := agent.SessionConfig{Context: compact.Config{Disabled: true}}
	for _, kind := range []llm.ErrorKind{llm.ErrAuthentication} {
		t.Run(string(kind), func(t *testing.T) {
			b := setup(t, agent.Config{Session: noCompaction}, newFakeClient(step{err: &llm.Error{Kind: kind, Provider: "test"}}))
			_, err := b.s.Submit(ctx30(t), "hi")
			if llm.KindOf(err) != kind || b.s.State() != agent.StateClosed {
				t.Fatalf("err %v state %s", err, b.s.State())
			}
			evs := b.waitEvent(t, agent.EventSessionEnd)
			if countKind(evs, agent.EventError) != 1 {
				t.Fatalf("events = %v", kinds(evs))
			}
		})
	}
}

// With compaction off, a context overflow is warned about, as the spec
// has it: WARNING (no ERROR), the input fails with the error, and the
// session stays usable (with compaction on it compacts and retries:
// context_test.go).
func TestContextOverflowWarnsOnlyWhenCompactionOff(t *testing.T) {
	noCompaction := agent.SessionConfig{Context: compact.Config{Disabled: true}}
	b := setup(t, agent.Config{Session: noCompaction},
		newFakeClient(step{err: &llm.Error{Kind: llm.ErrContextLength, Provider: "test"}}, step{text: "shorter now"}))
	out, err := b.s.Submit(ctx30(t), "a very long input")
	if llm.KindOf(err) != llm.ErrContextLength || out.Stop != agent.StopError || b.s.State() != agent.StateIdle {
		t.Fatalf("err %v stop %s state %s", err, out.Stop, b.s.State())
	}
	evs := b.waitEvent(t, agent.EventInputDone)
	if countKind(evs, agent.EventWarning) != 1 || countKind(evs, agent.EventError) != 0 {
		t.Fatalf("events = %v", kinds(evs))
	}
	if out, err := b.s.Submit(ctx30(t), "short"); err != nil || out.Text != "shorter now" {
		t.Fatalf("the session is not usable after the warning: %+v %v", out, err)
	}
}

func TestTransientErrorReturnsToIdleAndContinueRetries(t *testing.T) {
	client := newFakeClient(step{err: &llm.Error{Kind: llm.ErrOverloaded, Provider: "test"}}, step{text: "back"})
	b := setup(t, agent.Config{}, client)
	_, err := b.s.Submit(ctx30(t), "hi")
	if llm.KindOf(err) != llm.ErrOverloaded || b.s.State() != agent.StateIdle {
		t.Fatalf("err %v state %s", err, b.s.State())
	}
	out, err := b.s.Continue(ctx30(t))
	if err != nil || out.Text != "back" {
		t.Fatalf("Continue: %+v %v", out, err)
	}
}

func TestQueueModes(t *testing.T) {
	t.Run("reject", func(t *testing.T) {
		started, gate := make(chan string, 1), make(chan struct{})
		client := newFakeClient(step{calls: []llm.ToolCall{{ID: "g", Name: "gate", Arguments: []byte(`{}`)}}}, step{text: "ok"})
		b := setup(t, agent.Config{Session: agent.SessionConfig{QueueMode: agent.QueueReject}}, client, gateTool("gate", true, started, gate))
		done := make(chan error, 1)
		go func() { _, err := b.s.Submit(context.Background(), "first"); done <- err }()
		<-started
		if _, err := b.s.Submit(ctx30(t), "second"); !errors.Is(err, agent.ErrBusy) {
			t.Fatalf("err = %v, want ErrBusy", err)
		}
		close(gate)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})
	t.Run("interrupt", func(t *testing.T) {
		started := make(chan string, 1)
		client := newFakeClient(step{calls: []llm.ToolCall{{ID: "g", Name: "gate", Arguments: []byte(`{}`)}}}, step{text: "second answer"})
		b := setup(t, agent.Config{Session: agent.SessionConfig{QueueMode: agent.QueueInterrupt}}, client, gateTool("gate", true, started, nil))
		done := make(chan error, 1)
		go func() { _, err := b.s.Submit(context.Background(), "first"); done <- err }()
		<-started
		out, err := b.s.Submit(ctx30(t), "second")
		if err != nil || out.Text != "second answer" {
			t.Fatalf("second: %+v %v", out, err)
		}
		if err := <-done; !errors.Is(err, agent.ErrInterrupted) {
			t.Fatalf("first err = %v, want ErrInterrupted", err)
		}
		// The interrupted call was answered, so the request stays well-formed.
		req := client.Requests()[1]
		if req.Messages[3].Role != llm.RoleTool || !req.Messages[3].Content[0].ToolResult.IsError {
			t.Fatalf("interrupted call not answered: %+v", req.Messages[3])
		}
	})
	t.Run("queue", func(t *testing.T) {
		started, gate := make(chan string, 1), make(chan struct{})
		client := newFakeClient(step{calls: []llm.ToolCall{{ID: "g", Name: "gate", Arguments: []byte(`{}`)}}}, step{text: "first answer"}, step{text: "second answer"})
		b := setup(t, agent.Config{}, client, gateTool("gate", true, started, gate))
		var wg sync.WaitGroup
		var first agent.Outcome
		wg.Go(func() { first, _ = b.s.Submit(context.Background(), "first") })
		<-started
		second := make(chan agent.Outcome, 1)
		go func() { out, _ := b.s.Submit(context.Background(), "second"); second <- out }()
		close(gate)
		wg.Wait()
		if first.Text != "first answer" || (<-second).Text != "second answer" {
			t.Fatalf("first %+v", first)
		}
	})
}

func TestParallelReadOnlyCallsRunConcurrently(t *testing.T) {
	started, gate := make(chan string, 2), make(chan struct{})
	calls := []llm.ToolCall{{ID: "a", Name: "look", Arguments: []byte(`{}`)}, {ID: "b", Name: "look", Arguments: []byte(`{}`)}}
	client := newFakeClient(step{calls: calls}, step{text: "ok"})
	reg := tools.NewRegistry(gateTool("look", false, started, gate))
	b := setup(t, agent.Config{Profile: &testProfile{reg: reg, parallel: true, window: 1 << 20}}, client)
	done := make(chan error, 1)
	go func() { _, err := b.s.Submit(context.Background(), "look twice"); done <- err }()
	// Both calls start before either is released: they run concurrently.
	got := []string{<-started, <-started}
	close(gate)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	if !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("started = %v", got)
	}
	res := b.s.History()[2].Results
	if res[0].ToolCallID != "a" || res[1].ToolCallID != "b" {
		t.Fatalf("results out of call order: %+v", res)
	}
}

func TestMutatingCallsRunInOrder(t *testing.T) {
	var mu sync.Mutex
	var order []string
	rec := tools.Tool{Name: "rec", Mutates: true, Parameters: []byte(`{"type":"object"}`),
		Run: func(_ context.Context, c tools.Call) (tools.Output, error) {
			mu.Lock()
			order = append(order, c.ID)
			mu.Unlock()
			return tools.Output{Text: "ok"}, nil
		}}
	calls := []llm.ToolCall{{ID: "1", Name: "rec", Arguments: []byte(`{}`)}, {ID: "2", Name: "rec", Arguments: []byte(`{}`)}, {ID: "3", Name: "rec", Arguments: []byte(`{}`)}}
	reg := tools.NewRegistry(rec)
	b := setup(t, agent.Config{Profile: &testProfile{reg: reg, parallel: true, window: 1 << 20}}, newFakeClient(step{calls: calls}, step{text: "ok"}))
	if _, err := b.s.Submit(ctx30(t), "go"); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(order, []string{"1", "2", "3"}) {
		t.Fatalf("order = %v", order)
	}
}

func TestToolErrorBecomesErrorResult(t *testing.T) {
	client := newFakeClient(step{calls: []llm.ToolCall{{ID: "f", Name: "fail", Arguments: []byte(`{}`)}}}, step{text: "recovered"})
	b := setup(t, agent.Config{}, client)
	out, err := b.s.Submit(ctx30(t), "try")
	if err != nil || out.Text != "recovered" {
		t.Fatalf("%+v %v", out, err)
	}
	r := b.s.History()[2].Results[0]
	if !r.IsError || !strings.Contains(r.Content, "boom") {
		t.Fatalf("result = %+v", r)
	}
}

func TestContextWarningAbove80Percent(t *testing.T) {
	reg := tools.NewRegistry()
	client := newFakeClient(step{text: "big", usage: llm.Usage{InputTokens: 850, OutputTokens: 10}}, step{text: "small"})
	b := setup(t, agent.Config{Profile: &testProfile{reg: reg, window: 1000}}, client)
	if _, err := b.s.Submit(ctx30(t), "hi"); err != nil {
		t.Fatal(err)
	}
	evs := b.waitEvent(t, agent.EventWarning)
	if w := evs[len(evs)-1]; w.ContextPercent != 86 || !strings.Contains(w.Text, "86%") {
		t.Fatalf("WARNING = %+v", w)
	}
}

func TestAwaitingInputWhenModelAsks(t *testing.T) {
	b := setup(t, agent.Config{}, newFakeClient(step{text: "Which file do you mean?"}, step{text: "Done."}))
	out, err := b.s.Submit(ctx30(t), "fix it")
	if err != nil || out.State != agent.StateAwaitingInput {
		t.Fatalf("%+v %v", out, err)
	}
	out, err = b.s.Submit(ctx30(t), "main.go")
	if err != nil || out.State != agent.StateIdle {
		t.Fatalf("%+v %v", out, err)
	}
}
