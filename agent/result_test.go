package agent_test

import (
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/agent"
	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/llm/sim"
	"github.com/agentfleet/agentfleet/tools"
)

func sumSchema() *llm.ResponseFormat {
	return &llm.ResponseFormat{Name: "result", Schema: []byte(
		`{"type":"object","properties":{"sum":{"type":"integer"}},"required":["sum"],"additionalProperties":false}`)}
}

func repairNotes(h []agent.Turn) []string {
	var notes []string
	for _, t := range h {
		if t.Kind == agent.TurnSteering && t.Source == "result_schema" {
			notes = append(notes, t.Text)
		}
	}
	return notes
}

// An answer that does not match the result schema goes back to the model
// with its violations; the valid one is kept as Outcome.Structured. The
// model works with tools as usual before answering.
func TestResultSchemaRepair(t *testing.T) {
	forEachProvider(t, func(t *testing.T, p provider) {
		w := newWorld(t, p, agent.Config{ResultSchema: sumSchema()})
		w.script(calls(w.shell("echo 2+3")), sim.Text("The sum is 5."), sim.Text(`{"sum": "5"}`),
			sim.Text("```json\n{\"sum\": 5}\n```"))
		out := w.submit("add 2 and 3")
		if out.Stop != agent.StopCompleted || string(out.Structured) != `{"sum":5}` {
			t.Fatalf("stop %s, structured %s; want completed with {\"sum\":5}", out.Stop, out.Structured)
		}
		notes := repairNotes(w.s.History())
		if len(notes) != 2 {
			t.Fatalf("%d repair notes, want 2: %q", len(notes), notes)
		}
		contains(t, "the first repair note", notes[0], "not JSON")
		contains(t, "the second repair note", notes[1], "at /sum")
		contains(t, "the second repair note", notes[1], "repair 2 of 2")
		contains(t, "the first request", w.body(0), "Final answer format")
		contains(t, "the first request", w.body(0), `additionalProperties`)
		contains(t, "the last request", w.body(-1), "repair 2 of 2")
		if n := len(w.srv.Requests()); n != 4 {
			t.Fatalf("%d model requests, want 4", n)
		}
	})
}

// An answer that never matches stops the input with StopResultSchema and
// the violations, after DefaultResultRepairs repairs.
func TestResultSchemaExhausted(t *testing.T) {
	w := newWorld(t, providers[0], agent.Config{ResultSchema: sumSchema()})
	for range 3 {
		w.script(sim.Text(`{"sum": 5, "unit": "apples"}`))
	}
	out := w.submit("add 2 and 3")
	if out.Stop != agent.StopResultSchema || out.Structured != nil {
		t.Fatalf("stop %s, structured %s; want result_schema without a structured answer", out.Stop, out.Structured)
	}
	if len(out.Violations) == 0 || !strings.Contains(strings.Join(out.Violations, "; "), "unit") {
		t.Fatalf("violations %q do not name the extra property", out.Violations)
	}
	if n := len(repairNotes(w.s.History())); n != agent.DefaultResultRepairs {
		t.Fatalf("%d repair notes, want %d", n, agent.DefaultResultRepairs)
	}
	if w.s.State() != agent.StateIdle {
		t.Fatalf("state %s, want IDLE", w.s.State())
	}
	// A new input starts its repairs afresh.
	w.script(sim.Text(`{"sum": "seven"}`), sim.Text(`{"sum": 7}`))
	out = w.submit("now add 3 and 4")
	if out.Stop != agent.StopCompleted || string(out.Structured) != `{"sum":7}` {
		t.Fatalf("second input: stop %s, structured %s", out.Stop, out.Structured)
	}
}

// ResultRepairs < 0 allows none: the first mismatch stops the input.
func TestResultSchemaNoRepairs(t *testing.T) {
	w := newWorld(t, providers[0], agent.Config{ResultSchema: sumSchema(), ResultRepairs: -1})
	w.script(sim.Text("five"))
	out := w.submit("add 2 and 3")
	if out.Stop != agent.StopResultSchema || len(w.srv.Requests()) != 1 {
		t.Fatalf("stop %s after %d requests, want result_schema after 1", out.Stop, len(w.srv.Requests()))
	}
}

func TestResultSchemaRefused(t *testing.T) {
	cfg := agent.Config{Client: newFakeClient(), Profile: &testProfile{window: 1 << 20}, Env: dirEnv{dir: t.TempDir()},
		ResultSchema: &llm.ResponseFormat{Name: "result", Schema: []byte(`{"type":"array"}`)}}
	_, err := agent.New(cfg)
	if err == nil || !strings.Contains(err.Error(), "ResultSchema") {
		t.Fatalf("New with an array schema: %v, want an error naming ResultSchema", err)
	}
}

// A session resumed after its last answer was recorded but before it was
// checked validates it on Continue: an invalid one is repaired, a valid
// one is the outcome's Structured.
func TestResultSchemaCheckedOnResume(t *testing.T) {
	rec := agent.NewMemoryRecorder()
	b := setup(t, agent.Config{Recorder: rec}, newFakeClient(step{text: `{"sum": "five"}`}))
	if _, err := b.s.Submit(ctx30(t), "add 2 and 3"); err != nil {
		t.Fatal(err)
	}
	resume := func(client *fakeClient) *agent.Session {
		s, err := agent.Resume(ctx30(t), agent.Config{ID: b.s.ID(), Recorder: rec, Client: client, ResultSchema: sumSchema(),
			Profile: &testProfile{reg: tools.NewRegistry(echoTool(false)), window: 1 << 20}, Env: dirEnv{dir: b.dir}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Abort)
		return s
	}
	s := resume(newFakeClient(step{text: `{"sum": 5}`}))
	out, err := s.Continue(ctx30(t))
	if err != nil || out.Stop != agent.StopCompleted || string(out.Structured) != `{"sum":5}` || len(repairNotes(s.History())) != 1 {
		t.Fatalf("Continue after an invalid answer: %+v %v, %d repair notes; want one repair and {\"sum\":5}", out, err, len(repairNotes(s.History())))
	}
	s.Abort()
	client := newFakeClient()
	out, err = resume(client).Continue(ctx30(t))
	if err != nil || out.Stop != agent.StopCompleted || string(out.Structured) != `{"sum":5}` || len(client.Requests()) != 0 {
		t.Fatalf("Continue after a valid answer: %+v %v after %d requests; want its structured answer and no request", out, err, len(client.Requests()))
	}
}
