package agent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentfleet/agentfleet/agent"
	"github.com/agentfleet/agentfleet/agent/compact"
	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/llm/sim"
	"github.com/agentfleet/agentfleet/profiles"
	"github.com/agentfleet/agentfleet/tools"
)

// produceTool returns size bytes of text that differs per call (n), as a
// build log or a long file would.
func produceTool(size int) tools.Tool {
	return tools.Typed(tools.Tool{
		Name: "produce", Description: "Produce the output of step n.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`),
	}, func(_ context.Context, _ tools.Call, p struct {
		N int `json:"n"`
	}) (tools.Output, error) {
		var b strings.Builder
		for line := 0; b.Len() < size; line++ {
			fmt.Fprintf(&b, "step %d line %d: compiled package %d of the module, no errors\n", p.N, line, line*7+p.N)
		}
		return tools.Output{Text: b.String()[:size]}, nil
	})
}

// roundsModel answers the session's requests: a summary to a summary
// request, a produce call for each of the first rounds, then the final
// answer. It counts rounds itself (a compacted conversation no longer
// holds them all).
type roundsModel struct {
	mu        sync.Mutex
	rounds    int
	done      int
	summaries int
	final     string
}

func (m *roundsModel) respond(req sim.RecordedRequest) (sim.Reply, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if bytes.Contains(req.Body, []byte(compact.SummaryMarker)) {
		m.summaries++
		return sim.Text(fmt.Sprintf("Task: run the produce steps one by one.\nCurrent state: %d steps done, all without errors.\nNext steps: go on with the next step.", m.done)), true
	}
	if m.done >= m.rounds {
		return sim.Text(m.final), true
	}
	m.done++
	return sim.Reply{ToolCalls: []sim.ToolCallReply{{ID: fmt.Sprintf("call_%d", m.done), Name: "produce", Arguments: fmt.Sprintf(`{"n":%d}`, m.done)}}}, true
}

// fixedClock keeps the system prompt's date the same across sessions.
var fixedClock = profiles.WithClock(func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) })

// longWorld is a session with a 32,000-token window whose model calls
// produce (8 KB outputs) rounds times, then answers final.
func longWorld(t *testing.T, p provider, rounds, providerWindow int, cfg agent.Config) (*world, *roundsModel) {
	const window = 32_000
	w := newWorld(t, p, cfg, profiles.WithContextWindow(window), profiles.WithTools(produceTool(8000)), fixedClock)
	m := &roundsModel{rounds: rounds, final: fmt.Sprintf("All %d steps are done.", rounds)}
	w.srv.SetResponder(m.respond)
	w.srv.SetContextWindow("", providerWindow)
	return w, m
}

func TestLongSessionStaysInsideTheWindow(t *testing.T) {
	forEachProvider(t, func(t *testing.T, p provider) {
		const rounds, window = 300, 32_000
		w, m := longWorld(t, p, rounds, window, agent.Config{})
		out, err := w.s.Submit(context.Background(), "run the produce steps")
		if err != nil {
			t.Fatal(err)
		}
		w.inputDone()
		if out.Text != m.final || out.Rounds != rounds {
			t.Fatalf("outcome text %q after %d rounds, want %q after %d", out.Text, out.Rounds, m.final, rounds)
		}
		maxTokens := 0
		for _, r := range w.srv.Requests() {
			maxTokens = max(maxTokens, r.Tokens)
		}
		if maxTokens > window {
			t.Fatalf("a request of %d tokens was sent to a %d-token window", maxTokens, window)
		}
		compactions := countKind(w.Events(), agent.EventCompactionEnd)
		if compactions == 0 || m.summaries == 0 {
			t.Fatalf("%d compactions, %d summaries: the session never compacted", compactions, m.summaries)
		}
		if n := countKind(w.Events(), agent.EventError); n != 0 {
			t.Fatalf("%d ERROR events", n)
		}
		t.Logf("%s: %d requests, largest %d tokens, %d compactions, %d summaries", p.name, len(w.srv.Requests()), maxTokens, compactions, m.summaries)
	})
}

func TestOverflowDespiteEstimateCompactsAndRetriesOnce(t *testing.T) {
	forEachProvider(t, func(t *testing.T, p provider) {
		// The profile says 32,000 tokens; the server was started with
		// 16,000 (an Ollama num_ctx, say), so the estimate is wrong.
		w, m := longWorld(t, p, 12, 16_000, agent.Config{})
		out, err := w.s.Submit(context.Background(), "run the produce steps")
		if err != nil {
			t.Fatal(err)
		}
		w.inputDone()
		if out.Text != m.final {
			t.Fatalf("outcome %+v", out)
		}
		reqs := w.srv.Requests()
		refused := 0
		for i, r := range reqs {
			if r.Tokens <= 16_000 {
				continue
			}
			refused++
			if i+1 >= len(reqs) || reqs[i+1].Tokens > 16_000 {
				t.Fatalf("refused request %d was not followed by one that fits", i)
			}
		}
		if refused == 0 {
			t.Fatal("the server never refused a request: the test does not test the overflow")
		}
		reactive := 0
		for _, ev := range w.Events() {
			if ev.Kind == agent.EventCompactionEnd && ev.Context.Reason == compact.ReasonContextLength {
				reactive++
			}
		}
		if reactive != refused || countKind(w.Events(), agent.EventError) != 0 {
			t.Fatalf("%d refusals, %d reactive compactions, events %v", refused, reactive, kinds(w.Events()))
		}
		if p.name != "openai" && refused != 1 {
			// Anthropic and Gemini name the window in their error: one overflow teaches it.
			t.Fatalf("%d refusals; the window the error named was not learned", refused)
		}
	})
}

func TestResumeAfterCompactionSendsTheSameRequest(t *testing.T) {
	forEachProvider(t, func(t *testing.T, p provider) {
		rec := agent.NewMemoryRecorder()
		a, _ := longWorld(t, p, 30, 32_000, agent.Config{Recorder: rec})
		if _, err := a.s.Submit(context.Background(), "run the produce steps"); err != nil {
			t.Fatal(err)
		}
		history, _ := rec.Load(context.Background(), a.s.ID())
		c := -1
		for i, turn := range history {
			if turn.Kind == agent.TurnCompaction {
				c = i
				break
			}
		}
		if c < 0 {
			t.Fatal("no compaction in 30 rounds")
		}
		// What the dead worker sent next: its n-th model request (not
		// counting summary requests), n being the answers recorded so far.
		n := 0
		for _, turn := range history[:c] {
			if turn.Kind == agent.TurnAssistant {
				n++
			}
		}
		var main []sim.RecordedRequest
		for _, r := range a.srv.Requests() {
			if !bytes.Contains(r.Body, []byte(compact.SummaryMarker)) {
				main = append(main, r)
			}
		}
		want := main[n].Body

		// A new worker resumes from the turns recorded up to the compaction.
		srv := sim.NewServer()
		t.Cleanup(srv.Close)
		srv.Enqueue(sim.Text("done"))
		profile, err := profiles.ForProvider(p.name, p.model, profiles.WithContextWindow(32_000), profiles.WithTools(produceTool(8000)), fixedClock)
		must(t, err)
		b, err := agent.New(agent.Config{Client: p.dial(t, srv.URL()), Profile: profile, Env: a.env, ID: a.s.ID(), History: history[:c+1]})
		must(t, err)
		t.Cleanup(b.Abort)
		if _, err := b.Continue(ctx30(t)); err != nil {
			t.Fatal(err)
		}
		if got := srv.Requests()[0].Body; !bytes.Equal(got, want) {
			t.Fatalf("the resumed session's request differs from the dead one's:\n got %d bytes\nwant %d bytes", len(got), len(want))
		}
	})
}

func TestCompactionTurnIsDurableAndTranscriptAppendOnly(t *testing.T) {
	p := providers[1] // anthropic
	rec := agent.NewMemoryRecorder()
	w, _ := longWorld(t, p, 40, 32_000, agent.Config{Recorder: rec})
	var snapshots [][]agent.Turn
	sub := w.s.Subscribe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range sub.All(context.Background()) {
			if ev.Kind == agent.EventCompactionEnd {
				h, _ := rec.Load(context.Background(), w.s.ID())
				snapshots = append(snapshots, h)
			}
		}
	}()
	if _, err := w.s.Submit(context.Background(), "run the produce steps"); err != nil {
		t.Fatal(err)
	}
	w.s.Abort()
	<-done
	final, _ := rec.Load(context.Background(), w.s.ID())
	if len(snapshots) == 0 {
		t.Fatal("no compaction")
	}
	for _, snap := range snapshots {
		for i := range snap {
			a, _ := json.Marshal(snap[i])
			b, _ := json.Marshal(final[i])
			if !bytes.Equal(a, b) {
				t.Fatalf("turn %d changed after it was recorded", i)
			}
		}
	}
	for _, turn := range final {
		if turn.Kind != agent.TurnCompaction {
			continue
		}
		r := turn.Compaction
		if r == nil || r.TokensAfter >= r.TokensBefore || len(r.Strategies) == 0 {
			t.Fatalf("compaction record %+v", r)
		}
		if r.Replaced != [2]int{} && final[r.Replaced[1]].Kind == agent.TurnToolResults {
			t.Fatalf("the summary ends between a tool call and its result: %+v", r)
		}
	}
	if got := countKind(w.Events(), agent.EventCompactionStart); got != len(snapshots) {
		t.Fatalf("%d COMPACTION_START for %d COMPACTION_END", got, len(snapshots))
	}
}

func TestHostRequestedCompaction(t *testing.T) {
	p := providers[0]
	w, m := longWorld(t, p, 8, 32_000, agent.Config{})
	if _, err := w.s.Submit(context.Background(), "run the produce steps"); err != nil {
		t.Fatal(err)
	}
	if err := w.s.Compact(ctx30(t)); err != nil {
		t.Fatal(err)
	}
	end := w.waitFor("COMPACTION_END", w.kind(agent.EventCompactionEnd))
	if end.Context.Reason != compact.ReasonRequested || m.summaries != 1 {
		t.Fatalf("COMPACTION_END %+v, %d summaries", end.Context, m.summaries)
	}
	h := w.s.History()
	if last := h[len(h)-1]; last.Kind != agent.TurnCompaction || last.Compaction.Summary == "" || last.Usage.InputTokens == 0 {
		t.Fatalf("last turn %+v: want the summary and what it cost", last)
	}
	// A compaction after the answer does not reopen the input.
	n := len(w.srv.Requests())
	if out, err := w.s.Continue(ctx30(t)); err != nil || out.Stop != agent.StopCompleted || len(w.srv.Requests()) != n {
		t.Fatalf("Continue after an idle compaction: %+v %v, %d new requests", out, err, len(w.srv.Requests())-n)
	}
}

func TestWindowSmallerThanPromptAndToolsIsRefused(t *testing.T) {
	w := newWorld(t, providers[1], agent.Config{}, profiles.WithContextWindow(1000))
	_, err := w.s.Submit(ctx30(t), "hi")
	var we *agent.WindowError
	if !errors.As(err, &we) || we.Window != 1000 || we.FixedTokens <= 1000 {
		t.Fatalf("err = %v, want a WindowError naming both sizes", err)
	}
	if !strings.Contains(err.Error(), "1000") || !strings.Contains(err.Error(), fmt.Sprint(we.FixedTokens)) {
		t.Fatalf("message %q does not give both sizes", err)
	}
	if n := len(w.srv.Requests()); n != 0 {
		t.Fatalf("%d requests sent", n)
	}
}

func TestFailingSummaryIsRetriedThenTrimRuns(t *testing.T) {
	p := providers[1]
	w, m := longWorld(t, p, 150, 32_000, agent.Config{})
	inner := m.respond
	failures := 0
	w.srv.SetResponder(func(r sim.RecordedRequest) (sim.Reply, bool) {
		if bytes.Contains(r.Body, []byte(compact.SummaryMarker)) {
			failures++
			return sim.Fail(llm.ErrInvalidRequest), true
		}
		return inner(r)
	})
	out, err := w.s.Submit(context.Background(), "run the produce steps")
	if err != nil || out.Text != m.final {
		t.Fatalf("%+v %v", out, err)
	}
	w.inputDone()
	var end agent.Event
	for _, ev := range w.Events() {
		if ev.Kind == agent.EventCompactionEnd && strings.Contains(strings.Join(ev.Context.Strategies, ","), compact.StrategyTrim) {
			end = ev
			break
		}
	}
	if end.Context == nil || end.Context.Error == "" {
		t.Fatalf("no trim after a failing summary (%d summary requests)", failures)
	}
	if failures < 2 {
		t.Fatalf("the summary was tried %d times, want a retry", failures)
	}
}

func TestCutAnswerIsContinued(t *testing.T) {
	b := setup(t, agent.Config{}, newFakeClient(
		step{text: "The first half, ", finish: llm.FinishLength},
		step{text: "the second half, ", finish: llm.FinishLength},
		step{text: "and the end."}))
	out, err := b.s.Submit(ctx30(t), "write it")
	if err != nil || out.Text != "The first half, the second half, and the end." {
		t.Fatalf("%+v %v", out, err)
	}
	reqs := b.client.Requests()
	if len(reqs) != 3 || !strings.Contains(reqs[1].Messages[len(reqs[1].Messages)-1].Text(), "cut off") {
		t.Fatalf("%d requests; the continuation was not asked for", len(reqs))
	}
}

// A turn the provider paused (Anthropic's pause_turn during a long web
// search) is sent back to go on, and the answer is the whole of it.
func TestPausedTurnIsContinued(t *testing.T) {
	b := setup(t, agent.Config{}, newFakeClient(
		step{text: "Searching... ", finish: llm.FinishPaused},
		step{text: "found it."}))
	out, err := b.s.Submit(ctx30(t), "look it up")
	if err != nil || out.Text != "Searching... found it." {
		t.Fatalf("%+v %v", out, err)
	}
	reqs := b.client.Requests()
	if len(reqs) != 2 || !strings.Contains(reqs[1].Messages[len(reqs[1].Messages)-1].Text(), "where it paused") {
		t.Fatalf("%d requests; the paused turn was not continued", len(reqs))
	}
}

// rememberTool appends to the notes file through the session's
// environment, as a model's file tool would.
func rememberTool() tools.Tool {
	return tools.Typed(tools.Tool{
		Name: "remember", Description: "Append a note to MEMORY.md.", Mutates: true,
		Parameters: json.RawMessage(`{"type":"object","properties":{"note":{"type":"string"}},"required":["note"]}`),
	}, func(ctx context.Context, call tools.Call, p struct {
		Note string `json:"note"`
	}) (tools.Output, error) {
		old, _ := call.Env.ReadFile(ctx, "MEMORY.md")
		err := call.Env.WriteFile(ctx, "MEMORY.md", append(old, []byte(p.Note+"\n")...))
		return tools.Output{Text: "noted"}, err
	})
}

func TestMemoryFlushBeforeCompaction(t *testing.T) {
	for _, on := range []bool{true, false} {
		t.Run(fmt.Sprint("memory_flush=", on), func(t *testing.T) {
			cfg := agent.Config{Session: agent.SessionConfig{Context: compact.Config{MemoryFlush: on}}}
			w := newWorld(t, providers[1], cfg, profiles.WithContextWindow(32_000), profiles.WithTools(produceTool(8000), rememberTool()), fixedClock)
			m := &roundsModel{rounds: 150, final: "All 150 steps are done."}
			flushes := 0
			w.srv.SetResponder(func(r sim.RecordedRequest) (sim.Reply, bool) {
				note := bytes.LastIndex(r.Body, []byte("Store durable memories now"))
				done := bytes.LastIndex(r.Body, []byte("The notes are stored"))
				if note >= 0 && note > done && !bytes.Contains(r.Body, []byte(compact.SummaryMarker)) {
					if bytes.LastIndex(r.Body, []byte("mem_")) > note {
						return sim.Text("NO_REPLY"), true
					}
					flushes++
					return sim.Reply{ToolCalls: []sim.ToolCallReply{{ID: fmt.Sprintf("mem_%d", flushes), Name: "remember",
						Arguments: fmt.Sprintf(`{"note":"lesson %d: step outputs are all clean"}`, flushes)}}}, true
				}
				return m.respond(r)
			})
			w.srv.SetContextWindow("", 32_000)
			out, err := w.s.Submit(context.Background(), "run the produce steps")
			if err != nil || out.Text != m.final {
				t.Fatalf("%+v %v", out, err)
			}
			w.inputDone()
			for _, ev := range w.Events() {
				if strings.Contains(ev.Text, "NO_REPLY") {
					t.Fatalf("NO_REPLY was shown in %s", ev.Kind)
				}
			}
			carried := false
			for _, r := range w.srv.Requests() {
				body := strings.NewReplacer(`\u003c`, "<", `\u003e`, ">").Replace(string(r.Body))
				carried = carried || strings.Contains(body, `<memory>\nlesson 1: step outputs are all clean`)
			}
			if on && (flushes == 0 || !carried) {
				t.Fatalf("%d flushes, notes carried into the context: %v", flushes, carried)
			}
			if !on && (flushes != 0 || carried) {
				t.Fatalf("memory flush off, but %d flushes happened", flushes)
			}
		})
	}
}
