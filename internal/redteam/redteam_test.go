package redteam

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/execenv/sandbox"
	"github.com/agentfleet/agentfleet/internal/testenv"
	"github.com/agentfleet/agentfleet/llm/sim/scripted"
)

// A proof's command must not contain what it prints, or every probe
// would escape from its own tool call arguments.
func TestProofIsNotInItsCommand(t *testing.T) {
	cmd, want := proof("x")
	if strings.Contains(cmd, want) {
		t.Fatalf("command %q contains its proof %q", cmd, want)
	}
	if !strings.HasPrefix(cmd, "printf ") || !strings.HasSuffix(want, strings.Fields(cmd)[3]) {
		t.Fatalf("command %q does not print %q", cmd, want)
	}
}

func TestHexToLettersMatchesTr(t *testing.T) {
	if got := hexToLetters("0123456789abcdef-x"); got != "ghijklmnopqrstuv-x" {
		t.Fatalf("hexToLetters = %q", got)
	}
}

// The OpenAI side of the model answers the step of the turn: the first
// request the first step's call, after one answer the second step.
func TestOpenAIScriptTurns(t *testing.T) {
	prompt := scripted.Prompt("t", scripted.Step{Calls: []scripted.Call{{Name: "apply_patch", Args: map[string]any{"input": "p"}}}},
		scripted.Step{Text: "final"})
	req := func(input ...any) []byte {
		b, _ := json.Marshal(map[string]any{"input": input})
		return b
	}
	user := map[string]any{"role": "user", "content": []any{map[string]any{"type": "input_text", "text": prompt + "\n\n(worker context)"}}}
	rep, err := openAIScript(req(user))
	if err != nil || len(rep.ToolCalls) != 1 || rep.ToolCalls[0].Name != "apply_patch" || rep.ToolCalls[0].Arguments != `{"input":"p"}` {
		t.Fatalf("first turn: %+v, %v", rep, err)
	}
	call := map[string]any{"type": "function_call", "call_id": "c", "name": "apply_patch", "arguments": `{"input":"p"}`}
	out := map[string]any{"type": "function_call_output", "call_id": "c", "output": "ok"}
	rep, err = openAIScript(req(user, call, out))
	if err != nil || rep.Text != "final" || len(rep.ToolCalls) != 0 {
		t.Fatalf("second turn: %+v, %v", rep, err)
	}
}

// Names are unique and every probe says what it does.
func TestProbeNames(t *testing.T) {
	seen := map[string]bool{}
	for _, p := range Probes() {
		if seen[p.Name] || p.run == nil || p.What == "" || p.Issue == "" {
			t.Fatalf("probe %q is duplicated or incomplete", p.Name)
		}
		seen[p.Name] = true
	}
}

func TestRecordFindsDecodedStrings(t *testing.T) {
	r := &record{}
	r.addJSON([]byte(`{"a":[{"b":"CapEff:\t0000"}],"args":"{\"command\":\"echo hi\"}"}`))
	if _, ok := r.has("CapEff:\t0000"); !ok {
		t.Fatal("a tab in a JSON string was not decoded")
	}
	if _, ok := r.has("echo hi"); !ok {
		t.Fatal("a string holding JSON was not walked")
	}
	if _, ok := r.has("absent"); ok {
		t.Fatal("found what is not there")
	}
}

// The harness against a real fleet: the control runs, a plain probe
// holds, the table names both, and a -run that matches nothing is an
// error naming -list.
func TestRunControlAndAPlainProbe(t *testing.T) {
	if err := sandbox.Available(); err != nil {
		testenv.SkipOrFatal(t, "bubblewrap cannot run here: "+err.Error())
	}
	var out strings.Builder
	results, err := Run(t.Context(), Config{Match: regexp.MustCompile("^host-file$"), Dir: t.TempDir()}, &out)
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 2 || results[0].Outcome != OK || results[1].Probe != "host-file" || results[1].Outcome != Held {
		t.Fatalf("results %+v\n%s", results, out.String())
	}
	if Failed(results) || !strings.Contains(out.String(), "host-file") || !strings.Contains(out.String(), "control") {
		t.Fatalf("table:\n%s", out.String())
	}
	_, err = Run(t.Context(), Config{Match: regexp.MustCompile("^no-such-probe$")}, &out)
	if err == nil || !strings.Contains(err.Error(), "-list") {
		t.Fatalf("Run with no probe selected: %v", err)
	}
}
