package agent_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentfleet/agentfleet/agent"
	"github.com/agentfleet/agentfleet/agent/permission"
	"github.com/agentfleet/agentfleet/execenv"
	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/profiles"
)

// permWorld is a session with the anthropic profile's real tools in a
// temp workspace, under a permission checker.
func permWorld(t *testing.T, k *permission.Checker, ap agent.Approver, steps ...step) (*agent.Session, *fakeClient, string) {
	t.Helper()
	dir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("hello from the workspace\n"), 0o644))
	env, err := execenv.NewLocal(execenv.LocalConfig{WorkingDir: dir})
	must(t, err)
	client := newFakeClient(steps...)
	s, err := agent.New(agent.Config{Client: client, Profile: profiles.Anthropic("claude-sonnet-4-5"), Env: env,
		Permissions: k, Approver: ap})
	must(t, err)
	t.Cleanup(s.Abort)
	return s, client, dir
}

// resultOf returns the content of the tool result for callID in the
// requests the model received.
func resultOf(reqs []llm.Request, callID string) (string, bool) {
	for _, r := range reqs {
		for _, m := range r.Messages {
			for _, p := range m.Content {
				if p.ToolResult != nil && p.ToolResult.ToolCallID == callID {
					return p.ToolResult.Content, true
				}
			}
		}
	}
	return "", false
}

func TestPlanModeRefusesWritesAndAllowsReads(t *testing.T) {
	k := permission.NewChecker(permission.Policy{}, permission.Policy{Mode: permission.ModePlan})
	s, client, dir := permWorld(t, k, nil,
		step{calls: []llm.ToolCall{
			call("w1", "write_file", map[string]any{"file_path": "out.txt", "content": "x"}),
			call("r1", "read_file", map[string]any{"file_path": "notes.txt"}),
			call("s1", "shell", map[string]any{"command": "touch made.txt"}),
			call("g1", "grep", map[string]any{"pattern": "hello"}),
		}},
		step{text: "here is my plan"})
	sub := s.Subscribe()
	if _, err := s.Submit(ctx30(t), "plan a change"); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"out.txt", "made.txt"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			t.Errorf("%s was created in plan mode", f)
		}
	}
	reqs := client.Requests()
	for _, id := range []string{"w1", "s1"} {
		got, _ := resultOf(reqs, id)
		for _, want := range []string{"Permission denied (mode plan)", "plan mode", "reading files and searching work", "Do not retry"} {
			if !strings.Contains(got, want) {
				t.Errorf("result of %s %q lacks %q", id, got, want)
			}
		}
	}
	if got, _ := resultOf(reqs, "r1"); !strings.Contains(got, "hello from the workspace") {
		t.Errorf("read_file in plan mode: %q", got)
	}
	if got, _ := resultOf(reqs, "g1"); !strings.Contains(got, "notes.txt") {
		t.Errorf("grep in plan mode: %q", got)
	}
	var denied []string
	for _, ev := range drain(sub) {
		if ev.Kind == agent.EventPermissionDenied {
			denied = append(denied, ev.ToolName+" "+ev.Permission.Rule)
		}
	}
	if strings.Join(denied, ",") != "write_file mode plan,shell mode plan" {
		t.Errorf("PERMISSION_DENIED events: %v", denied)
	}
	var records []permission.Record
	for _, turn := range s.History() {
		if turn.Kind == agent.TurnPermission {
			records = append(records, *turn.Permission)
		}
	}
	if len(records) != 2 || records[0].Tool != "write_file" || records[0].Summary != "out.txt" || records[1].Summary != "touch made.txt" {
		t.Errorf("denial records in the history: %+v", records)
	}
}

// drain returns the events buffered so far (the session is idle).
func drain(sub *agent.Subscription) []agent.Event {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var evs []agent.Event
	for {
		ev, ok := sub.Next(ctx)
		if !ok {
			return evs
		}
		evs = append(evs, ev)
	}
}

// recordingApprover answers from a fixed answer or asks to park.
type recordingApprover struct {
	mu     sync.Mutex
	asked  []permission.Request
	answer *permission.Answer
}

func (a *recordingApprover) Approve(_ context.Context, req permission.Request) (permission.Answer, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked = append(a.asked, req)
	if a.answer == nil {
		return permission.Answer{}, permission.ErrPending
	}
	return *a.answer, nil
}

func TestDestructiveCommandParksThenRunsOnceApproved(t *testing.T) {
	ap := &recordingApprover{}
	k := permission.NewChecker(permission.Policy{})
	s, client, dir := permWorld(t, k, ap,
		step{calls: []llm.ToolCall{call("c1", "shell", map[string]any{"command": "mkdir -p d && touch d/x && git reset --hard 2>/dev/null; echo ran > ran.txt"})}},
		step{text: "done"})
	_, err := s.Submit(ctx30(t), "clean up")
	if !errors.Is(err, agent.ErrParked) {
		t.Fatalf("Submit: %v, want ErrParked", err)
	}
	if len(ap.asked) != 1 || ap.asked[0].Rule != "destructive: hard reset" || ap.asked[0].CallID != "c1" {
		t.Fatalf("asked: %+v", ap.asked)
	}
	if _, err := os.Stat(filepath.Join(dir, "ran.txt")); err == nil {
		t.Fatal("the command ran before it was approved")
	}
	// The host appends the answer and resumes the history.
	h := s.History()
	h = append(h, agent.AnswerTurn(len(h), ap.asked[0], permission.Answer{Approved: true, By: "test"}, time.Now()))
	env, err := execenv.NewLocal(execenv.LocalConfig{WorkingDir: dir})
	must(t, err)
	s2, err := agent.Resume(ctx30(t), agent.Config{Client: client, Profile: profiles.Anthropic("claude-sonnet-4-5"), Env: env,
		Permissions: k, Approver: ap, ID: s.ID(), History: h})
	must(t, err)
	t.Cleanup(s2.Abort)
	if _, err := s2.Continue(ctx30(t)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "ran.txt")); err != nil {
		t.Fatalf("the approved command did not run: %v", err)
	}
	if len(ap.asked) != 1 {
		t.Errorf("asked again after the answer: %+v", ap.asked)
	}
}

func TestDeniedAnswerGivesTheModelTheReasonAndRememberApplies(t *testing.T) {
	ap := &recordingApprover{answer: &permission.Answer{Approved: false, Reason: "not on main", Remember: true, By: "ana"}}
	k := permission.NewChecker(permission.Policy{})
	s, client, _ := permWorld(t, k, ap,
		step{calls: []llm.ToolCall{call("p1", "shell", map[string]any{"command": "git push --force"})}},
		step{calls: []llm.ToolCall{call("p2", "shell", map[string]any{"command": "git push -f origin x"})}},
		step{text: "ok"})
	if _, err := s.Submit(ctx30(t), "push"); err != nil {
		t.Fatal(err)
	}
	got, _ := resultOf(client.Requests(), "p1")
	if !strings.Contains(got, "a person denied it: not on main") {
		t.Errorf("denied result: %q", got)
	}
	if len(ap.asked) != 1 {
		t.Errorf("a remembered answer was asked again: %d times", len(ap.asked))
	}
	if got, _ := resultOf(client.Requests(), "p2"); !strings.Contains(got, "a person denied it: not on main") {
		t.Errorf("the remembered denial: %q", got)
	}
}

func TestAskWithoutApproverIsDenied(t *testing.T) {
	k := permission.NewChecker(permission.Policy{Mode: permission.ModeAsk})
	s, client, dir := permWorld(t, k, nil,
		step{calls: []llm.ToolCall{call("e1", "write_file", map[string]any{"file_path": "a.txt", "content": "x"})}},
		step{text: "ok"})
	if _, err := s.Submit(ctx30(t), "write"); err != nil {
		t.Fatal(err)
	}
	got, _ := resultOf(client.Requests(), "e1")
	if !strings.Contains(got, "no one can be asked") {
		t.Errorf("result: %q", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "a.txt")); err == nil {
		t.Error("the asked call ran without an answer")
	}
}

func TestProtectedPathRefusedWhateverTheRules(t *testing.T) {
	k := permission.NewChecker(permission.Policy{Rules: []permission.Rule{{Tool: "*", Action: permission.Allow}}})
	s, client, dir := permWorld(t, k, nil,
		step{calls: []llm.ToolCall{call("e1", "write_file", map[string]any{"file_path": filepath.Join("x", ".git", "config"), "content": "x"})}},
		step{text: "ok"})
	if _, err := s.Submit(ctx30(t), "write"); err != nil {
		t.Fatal(err)
	}
	got, _ := resultOf(client.Requests(), "e1")
	if !strings.Contains(got, "Permission denied (protected .git/)") {
		t.Errorf("result: %q", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "x", ".git", "config")); err == nil {
		t.Error("a protected path was written")
	}
}

// TestConcurrentRoundParksOnEveryAskedCall: in a round of reads run
// concurrently, the calls that ask all park while the others run and are
// recorded.
func TestConcurrentRoundParksOnEveryAskedCall(t *testing.T) {
	ap := &recordingApprover{}
	k := permission.NewChecker(permission.Policy{Rules: []permission.Rule{{Tool: "read_file", Pattern: "secret*", Action: permission.Ask}}})
	s, _, _ := permWorld(t, k, ap, step{calls: []llm.ToolCall{
		call("a", "read_file", map[string]any{"file_path": "secret1"}),
		call("b", "grep", map[string]any{"pattern": "hello"}),
		call("c", "read_file", map[string]any{"file_path": "secret2"}),
	}})
	if _, err := s.Submit(ctx30(t), "look"); !errors.Is(err, agent.ErrParked) {
		t.Fatalf("Submit: %v, want ErrParked", err)
	}
	if len(ap.asked) != 2 {
		t.Fatalf("asked %d times, want 2 (a and c)", len(ap.asked))
	}
	var answered []string
	for _, turn := range s.History() {
		for _, r := range turn.Results {
			answered = append(answered, r.ToolCallID)
		}
	}
	if strings.Join(answered, ",") != "b" {
		t.Fatalf("recorded results for %v, want only b", answered)
	}
}

// Validate, then approve, then execute: calls that cannot run (an unknown
// tool, arguments that are not JSON or fail the schema, a patch that does
// not parse) get their error at once, even where the policy asks about
// every call, and no person is asked.
func TestCallsThatCannotRunAreNeverPutToAPerson(t *testing.T) {
	ap := &recordingApprover{}
	k := permission.NewChecker(permission.Policy{}, permission.Policy{Mode: permission.ModeAsk})
	dir := t.TempDir()
	env, err := execenv.NewLocal(execenv.LocalConfig{WorkingDir: dir})
	must(t, err)
	client := newFakeClient(step{calls: []llm.ToolCall{
		call("u1", "frobnicate", map[string]any{"path": ".git/config"}),
		call("m1", "write_file", map[string]any{"file_path": 5}),
		{ID: "j1", Name: "write_file", Arguments: []byte(`{"file_path": "a.txt", "content": `), ArgumentsError: "unexpected end of JSON input"},
		call("p1", "apply_patch", map[string]any{"input": "*** Add File: a.txt\n+x"}),
	}}, step{text: "done"})
	s, err := agent.New(agent.Config{Client: client, Profile: profiles.OpenAI(""), Env: env, Permissions: k, Approver: ap})
	must(t, err)
	t.Cleanup(s.Abort)
	sub := s.Subscribe()
	if _, err := s.Submit(ctx30(t), "do things"); err != nil {
		t.Fatalf("Submit: %v (the session must not park for calls that cannot run)", err)
	}
	if len(ap.asked) != 0 {
		t.Errorf("a person was asked about %+v", ap.asked)
	}
	for _, ev := range drain(sub) {
		if ev.Kind == agent.EventApprovalRequested || ev.Kind == agent.EventPermissionDenied {
			t.Errorf("%s event for %s", ev.Kind, ev.CallID)
		}
	}
	reqs := client.Requests()
	for id, want := range map[string]string{
		"u1": `Unknown tool: "frobnicate". Available tools: `,
		"m1": "Tool error (write_file): invalid arguments: at / (the arguments object): missing property 'content'; at /file_path: got number, want string",
		"j1": "Tool error (write_file): the arguments are not valid JSON (unexpected end of JSON input)",
		"p1": "Tool error (apply_patch): invalid patch: ",
	} {
		if got, _ := resultOf(reqs, id); !strings.HasPrefix(got, want) {
			t.Errorf("result of %s = %q, want it to start %q", id, got, want)
		}
	}
}
