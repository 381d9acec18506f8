package approval_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/agentfleet/agentfleet/agent"
	"github.com/agentfleet/agentfleet/agent/permission"
	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/api"
	"github.com/agentfleet/agentfleet/fleet/approval"
	"github.com/agentfleet/agentfleet/fleet/client"
	"github.com/agentfleet/agentfleet/fleet/dispatcher"
	"github.com/agentfleet/agentfleet/fleet/fleettest"
	"github.com/agentfleet/agentfleet/fleet/worker"
	"github.com/agentfleet/agentfleet/internal/testenv"
	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/store"
)

// bundle is a test fleet with a dispatcher API in front of it; api
// holds the bootstrap token.
type bundle struct {
	*fleettest.Fleet
	api        *client.Client
	dispatcher *dispatcher.Dispatcher
	url        string
}

// bootstrapToken is the API's configured token in these tests.
const bootstrapToken = "approval-test-bootstrap"

// principalClient is a client with an API token of its own.
type principalClient struct {
	*client.Client
	id string
}

// tokenClient creates an API token with role in the default tenant.
func (b bundle) tokenClient(t *testing.T, name, role string) principalClient {
	t.Helper()
	tok, err := b.api.CreateToken(ctx(t), api.TokenRequest{Name: name, Grants: map[string]string{fleet.DefaultTenant: role}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(b.url, tok.Token, nil)
	if err != nil {
		t.Fatal(err)
	}
	return principalClient{Client: c, id: tok.ID}
}

func setup(t *testing.T, opts fleettest.Options, dcfg dispatcher.Config) bundle {
	t.Helper()
	f := fleettest.Start(t, opts)
	dcfg.Logger = slog.New(slog.DiscardHandler)
	if dcfg.Policy.SharedRoots == nil { // the shared directories of these tests, as the harness's workers allow
		dcfg.Policy.SharedRoots = []string{fleettest.SharedRoot()}
	}
	d, err := dispatcher.New(f.Store, f.Queue, dcfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() { defer close(ran); _ = d.Run(ctx) }()
	srv := httptest.NewServer(d.Handler(dispatcher.APIOptions{Token: bootstrapToken}))
	t.Cleanup(func() { srv.CloseClientConnections(); srv.Close(); stop(); <-ran })
	c, err := client.New(srv.URL, bootstrapToken, nil)
	if err != nil {
		t.Fatal(err)
	}
	return bundle{Fleet: f, api: c, dispatcher: d, url: srv.URL}
}

// destructive is a task whose first call is a destructive command that
// leaves a mark, and whose answer repeats the tool results.
func destructive(dir, title string) fleet.TaskSpec {
	spec := fleettest.Spec(title,
		fleettest.Step{Calls: []fleettest.Call{fleettest.Shell("git reset --hard 2>/dev/null; echo ran > " + title + ".mark; echo ran-" + title)}},
		fleettest.Step{Text: "results: {{results}}"})
	if dir != "" {
		spec.Environment = fleet.Environment{Kind: fleet.EnvLocal, WorkingDir: dir, Shared: true}
	}
	return spec
}

// waitPending waits until task id waits for an approval and returns it.
func (b bundle) waitPending(t *testing.T, id uuid.UUID) fleet.PendingApproval {
	t.Helper()
	task := b.WaitFor("a pending approval", id, func(t store.Task) bool {
		wf, err := fleet.DecodeWaitingFor(t.WaitingFor)
		return t.State == store.TaskWaiting && err == nil && len(wf.Approvals) > 0
	})
	wf, err := fleet.DecodeWaitingFor(task.WaitingFor)
	if err != nil {
		t.Fatal(err)
	}
	return wf.Approvals[0]
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), fleettest.Wait)
	t.Cleanup(cancel)
	return c
}

func TestDestructiveCommandParksAndApprovalRunsItOnAnotherWorker(t *testing.T) {
	b := setup(t, fleettest.Options{Workers: 1}, dispatcher.Config{})
	dir := fleettest.SharedDir(t)
	id := b.Submit(destructive(dir, "reset"))
	pa := b.waitPending(t, id)
	if pa.Tool != "shell" || pa.Rule != "destructive: hard reset" || !strings.Contains(pa.Summary, "git reset --hard") ||
		pa.ExpiresAt.Sub(pa.RequestedAt) != fleet.DefaultApprovalTimeout {
		t.Fatalf("pending approval: %+v", pa)
	}
	if _, err := os.Stat(filepath.Join(dir, "reset.mark")); err == nil {
		t.Fatal("the destructive command ran before it was approved")
	}
	task := b.Task(id)
	if ok, err := b.Queue.HasEvent(ctx(t), task.RootID.String(), id.String(), string(agent.EventApprovalRequested)); err != nil || !ok {
		t.Fatalf("APPROVAL_REQUESTED event: %v %v", ok, err)
	}
	parker := task.WorkerID
	b.Workers()[0].Stop(t) // the parked task holds nothing on it
	other := b.StartWorker()

	// The approver recorded is the principal of the token, never a name
	// the request gives.
	ana := b.tokenClient(t, "ana", "approver")
	if _, err := ana.Decide(ctx(t), id, pa.CallID, api.ApprovalRequest{Decision: api.DecisionApprove, By: "bob"}); err == nil {
		t.Fatal("an approval naming another approver was accepted")
	}
	if _, err := ana.Decide(ctx(t), id, pa.CallID, api.ApprovalRequest{Decision: api.DecisionApprove}); err != nil {
		t.Fatal(err)
	}
	done := b.WaitDone(id)
	if done.State != store.TaskSucceeded || done.WorkerID != other.ID() || done.WorkerID == parker {
		t.Fatalf("task %s on %s (parked on %s, other %s)", done.State, done.WorkerID, parker, other.ID())
	}
	if _, err := os.Stat(filepath.Join(dir, "reset.mark")); err != nil {
		t.Fatalf("the approved command did not run: %v", err)
	}
	if res := fleettest.Result(t, done); !strings.Contains(res.FinalText, "ran-reset") {
		t.Errorf("the model did not see the command's output: %q", res.FinalText)
	}
	perms, err := b.api.Permissions(ctx(t), id)
	if err != nil {
		t.Fatal(err)
	}
	if len(perms.Pending) != 0 || len(perms.Records) != 1 || perms.Records[0].Answer == nil || !perms.Records[0].Answer.Approved || perms.Records[0].Answer.By != "token:"+ana.id {
		t.Fatalf("permissions after the approval: %+v", perms)
	}
	// The answer turn is the agent's (agent.AnswerTurn): it keeps what was asked.
	if rec := perms.Records[0]; rec.Kind != permission.RecordAnswer || rec.CallID != pa.CallID || rec.Rule != pa.Rule ||
		rec.Summary != pa.Summary || rec.Time.IsZero() {
		t.Errorf("answer record %+v, asked %+v", rec, pa)
	}
}

func TestDenyGivesTheModelTheReasonAndIsRecorded(t *testing.T) {
	b := setup(t, fleettest.Options{Workers: 1}, dispatcher.Config{})
	id := b.Submit(destructive("", "deny"))
	pa := b.waitPending(t, id)
	if _, err := b.api.Decide(ctx(t), id, pa.CallID, api.ApprovalRequest{Decision: api.DecisionDeny, Reason: "keep the history"}); err != nil {
		t.Fatal(err)
	}
	done := b.WaitDone(id)
	res := fleettest.Result(t, done)
	if done.State != store.TaskSucceeded || !strings.Contains(res.FinalText, "a person denied it: keep the history") || strings.Contains(res.FinalText, "ran-deny") {
		t.Fatalf("task %s, answer %q", done.State, res.FinalText)
	}
	perms, err := b.api.Permissions(ctx(t), id)
	if err != nil {
		t.Fatal(err)
	}
	var denial *permission.Record
	for i, r := range perms.Records {
		if r.Kind == permission.RecordDenial {
			denial = &perms.Records[i]
		}
	}
	if denial == nil || denial.Tool != "shell" || denial.Rule != "destructive: hard reset" || !strings.Contains(denial.Reason, "keep the history") ||
		!strings.Contains(denial.Summary, "git reset --hard") {
		t.Fatalf("denial record: %+v", perms.Records)
	}
	if ok, err := b.Queue.HasEvent(ctx(t), done.RootID.String(), id.String(), string(agent.EventPermissionDenied)); err != nil || !ok {
		t.Errorf("PERMISSION_DENIED event: %v %v", ok, err)
	}
	if n := counter(t, b.Workers()[0].Worker.Gatherer(), "agentfleet_worker_permission_denials_total"); n != 1 {
		t.Errorf("denials metric %v, want 1", n)
	}
	if n := counter(t, b.dispatcher.Metrics().Registry, "agentfleet_dispatcher_approvals_answered_total"); n != 1 {
		t.Errorf("answers metric %v, want 1", n)
	}
}

// counter sums a counter over its labels.
func counter(t *testing.T, g prometheus.Gatherer, name string) float64 {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, mf := range mfs {
		if mf.GetName() == name {
			for _, m := range mf.GetMetric() {
				sum += metricValue(m)
			}
		}
	}
	return sum
}

func metricValue(m *dto.Metric) float64 { return m.GetCounter().GetValue() }

func TestWaitingApprovalsHoldNoSlot(t *testing.T) {
	b := setup(t, fleettest.Options{Workers: 1, Slots: 2}, dispatcher.Config{})
	var parked []uuid.UUID
	for i := range 3 {
		parked = append(parked, b.Submit(destructive("", fmt.Sprintf("p%d", i))))
	}
	for _, id := range parked {
		b.waitPending(t, id)
	}
	free := b.Submit(fleettest.Spec("free", fleettest.Step{Calls: []fleettest.Call{fleettest.Shell("echo fine")}}, fleettest.Step{Text: "ok"}))
	if done := b.WaitDone(free); done.State != store.TaskSucceeded {
		t.Fatalf("the 4th task: %s %s", done.State, done.Error)
	}
	for _, id := range parked {
		if s := b.Task(id).State; s != store.TaskWaiting {
			t.Errorf("parked task %s is %s", id, s)
		}
	}
}

func TestApprovingACallThatIsNotPendingIs409(t *testing.T) {
	b := setup(t, fleettest.Options{Workers: 1}, dispatcher.Config{})
	id := b.Submit(destructive("", "twice"))
	pa := b.waitPending(t, id)
	_, err := b.api.Decide(ctx(t), id, "no-such-call", api.ApprovalRequest{Decision: api.DecisionApprove})
	assertStatus(t, err, 409, "no-such-call")
	if _, err := b.api.Decide(ctx(t), id, pa.CallID, api.ApprovalRequest{Decision: api.DecisionApprove}); err != nil {
		t.Fatal(err)
	}
	// Answered: the task is queued (answered already) or running (not waiting).
	_, err = b.api.Decide(ctx(t), id, pa.CallID, api.ApprovalRequest{Decision: api.DecisionDeny})
	assertStatus(t, err, 409, pa.CallID)
	b.WaitDone(id)
	_, err = b.api.Decide(ctx(t), id, pa.CallID, api.ApprovalRequest{Decision: "maybe"})
	assertStatus(t, err, 400, "approve or deny")
}

func assertStatus(t *testing.T, err error, status int, has string) {
	t.Helper()
	var ae *client.APIError
	if !errors.As(err, &ae) || ae.Status != status || !strings.Contains(ae.Message, has) {
		t.Fatalf("got %v, want a %d mentioning %q", err, status, has)
	}
}

func TestSpecPermissionsBadInput(t *testing.T) {
	b := setup(t, fleettest.Options{NoWorkers: true}, dispatcher.Config{Permissions: &permission.Policy{Mode: permission.ModeAsk}})
	submit := func(p permission.Policy) error {
		spec := fleettest.Spec("x", fleettest.Step{Text: "ok"})
		spec.Permissions = &p
		_, err := b.api.Submit(ctx(t), spec)
		return err
	}
	cases := []struct {
		p     permission.Policy
		field string
		has   string
	}{
		{permission.Policy{Mode: permission.ModeAllow}, "spec.permissions.mode", "wider than the operator's \"ask\""},
		{permission.Policy{Destructive: permission.Allow}, "spec.permissions.destructive", "wider"},
		{permission.Policy{Mode: "yolo"}, "spec.permissions.mode", "allow, accept_edits, ask, deny, plan"},
		{permission.Policy{Rules: []permission.Rule{{Tool: "shell", Action: permission.Allow}, {Tool: "shell", Pattern: "rm [", Action: permission.Deny}}},
			"spec.permissions.rules[1].pattern", "'['"},
	}
	for _, c := range cases {
		err := submit(c.p)
		var ae *client.APIError
		if !errors.As(err, &ae) || ae.Status != 400 || ae.Field != c.field || !strings.Contains(ae.Message, c.has) {
			t.Errorf("%+v: got %v (field %v), want a 400 on %s mentioning %q", c.p, err, fieldOf(err), c.field, c.has)
		}
	}
	if err := submit(permission.Policy{Mode: permission.ModePlan}); err != nil {
		t.Errorf("a narrowing spec: %v", err)
	}
}

func fieldOf(err error) string {
	if ae, ok := errors.AsType[*client.APIError](err); ok {
		return ae.Field
	}
	return ""
}

func TestPlanModeInAFleet(t *testing.T) {
	b := setup(t, fleettest.Options{Workers: 1}, dispatcher.Config{})
	dir := fleettest.SharedDir(t)
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("the plan is in here\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	spec := fleettest.Spec("plan",
		fleettest.Step{Calls: []fleettest.Call{
			{Name: "write_file", Args: map[string]any{"file_path": "new.go", "content": "package x"}},
			{Name: "read_file", Args: map[string]any{"file_path": "README.md"}},
		}},
		fleettest.Step{Text: "{{results}}"})
	spec.Environment = fleet.Environment{Kind: fleet.EnvLocal, WorkingDir: dir, Shared: true}
	spec.Permissions = &permission.Policy{Mode: permission.ModePlan}
	id := b.Submit(spec)
	done := b.WaitDone(id)
	text := fleettest.Result(t, done).FinalText
	for _, want := range []string{"Permission denied (mode plan)", "reading files and searching work", "the plan is in here"} {
		if !strings.Contains(text, want) {
			t.Errorf("the model's view %q lacks %q", text, want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "new.go")); err == nil {
		t.Error("plan mode wrote a file")
	}
}

func TestUnansweredApprovalExpiresAsADenial(t *testing.T) {
	b := setup(t, fleettest.Options{Workers: 1, Worker: func(_ int, c *worker.Config) { c.ApprovalTimeout = 300 * time.Millisecond }},
		dispatcher.Config{ApprovalSweep: 100 * time.Millisecond})
	id := b.Submit(destructive("", "expire"))
	b.waitPending(t, id)
	done := b.WaitDone(id)
	if text := fleettest.Result(t, done).FinalText; !strings.Contains(text, approval.ExpiredReason) {
		t.Fatalf("answer after the expiry: %q", text)
	}
}

// TestSweepResumesATaskADecideLeftClaimed stands in for a dispatcher that
// died between its claim and its record: the sweep resumes the task, whose
// session asks again.
func TestSweepResumesATaskADecideLeftClaimed(t *testing.T) {
	b := setup(t, fleettest.Options{Workers: 1}, dispatcher.Config{ApprovalSweep: 100 * time.Millisecond})
	id := b.Submit(destructive("", "stranded"))
	first := b.waitPending(t, id)
	parked := b.Task(id)
	if _, err := b.Store.ClaimTask(ctx(t), store.ClaimTaskParams{ID: id, WorkerID: approval.ClaimerPrefix + parked.WorkerID,
		From: []store.TaskState{store.TaskWaiting}}); err != nil {
		t.Fatal(err)
	}
	again := b.WaitFor("the task to ask again", id, func(t store.Task) bool {
		return t.State == store.TaskWaiting && t.Attempts > parked.Attempts+1
	})
	wf, err := fleet.DecodeWaitingFor(again.WaitingFor)
	if err != nil || len(wf.Approvals) != 1 || wf.Approvals[0].CallID != first.CallID {
		t.Fatalf("waiting for %s after the sweep (%v)", again.WaitingFor, err)
	}
}

func TestApproveOverTheControlSubject(t *testing.T) {
	b := setup(t, fleettest.Options{Workers: 1}, dispatcher.Config{})
	id := b.Submit(destructive("", "control"))
	pa := b.waitPending(t, id)
	req := queue.ControlRequest{Op: queue.OpApprove, TaskID: id.String(), CallID: pa.CallID, By: "bot"}
	var reply queue.ControlReply
	testenv.EventuallyErr(t, fleettest.Wait, "the dispatcher to serve approvals", func() (err error) {
		reply, err = b.Queue.AnswerApproval(ctx(t), req)
		return err
	})
	if !reply.OK {
		t.Fatalf("reply %+v", reply)
	}
	if done := b.WaitDone(id); !strings.Contains(fleettest.Result(t, done).FinalText, "ran-control") {
		t.Fatalf("the approved command's output is not in the answer: %q", fleettest.Result(t, done).FinalText)
	}
	_, err := b.Queue.AnswerApproval(ctx(t), req)
	if !errors.Is(err, queue.ErrControlRefused) || !strings.Contains(err.Error(), "not pending") {
		t.Fatalf("a second approve: %v", err)
	}
}

// TestAnswerAgainResendsALostResume stands in for a Decide whose resume
// could not be sent (NATS away): the answer is in the history and the task
// queued with no message. Answering again is a 409 that sends the resume,
// and the approved call runs.
func TestAnswerAgainResendsALostResume(t *testing.T) {
	b := setup(t, fleettest.Options{Workers: 1}, dispatcher.Config{})
	spec := fleettest.Spec("lost", fleettest.Step{Calls: []fleettest.Call{fleettest.Shell("git reset --hard 2>/dev/null; echo ran-lost")}},
		fleettest.Step{Text: "results: {{results}}"})
	body, _ := json.Marshal(spec.WithDefaults())
	c := ctx(t)
	created, err := b.Store.CreateTask(c, store.CreateTaskParams{Spec: body})
	if err != nil {
		t.Fatal(err)
	}
	id := created.Task.ID
	claimer := approval.ClaimerPrefix + b.Workers()[0].ID()
	if _, err := b.Store.ClaimTask(c, store.ClaimTaskParams{ID: id, WorkerID: claimer}); err != nil {
		t.Fatal(err)
	}
	user, _ := json.Marshal(agent.Turn{Index: 0, Kind: agent.TurnUser, Text: spec.Prompt})
	asst, _ := json.Marshal(agent.Turn{Index: 1, Kind: agent.TurnAssistant, ToolCalls: []llm.ToolCall{{ID: "toolu_0_0", Name: "shell",
		Arguments: json.RawMessage(`{"command":"git reset --hard 2>/dev/null; echo ran-lost"}`)}}})
	asked := permission.Request{CallID: "toolu_0_0", Tool: "shell", Rule: "destructive: hard reset"}
	answer, _ := json.Marshal(agent.AnswerTurn(2, asked, permission.Answer{Approved: true, By: "ana"}, time.Now()))
	_, err = b.Store.TransitionTask(c, store.TransitionTaskParams{ID: id, From: store.TaskRunning, To: store.TaskQueued, WorkerID: claimer,
		Append: &store.AppendTurnsParams{SessionID: id, OwnerWorkerID: claimer,
			CreateSession: &store.CreateSessionParams{ID: id, TaskID: id, Profile: "anthropic", Provider: "anthropic", Model: "claude-test"},
			Turns: []store.NewTurn{{Seq: 1, Kind: "user", Payload: user}, {Seq: 2, Kind: "assistant", Payload: asst},
				{Seq: 3, Kind: "permission", Payload: answer}}}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.api.Decide(c, id, "toolu_0_0", api.ApprovalRequest{Decision: api.DecisionApprove})
	assertStatus(t, err, 409, "sent again")
	done := b.WaitDone(id)
	if text := fleettest.Result(t, done).FinalText; done.State != store.TaskSucceeded || !strings.Contains(text, "ran-lost") {
		t.Fatalf("task %s, answer %q", done.State, text)
	}
}

// TestWorkerRefusesASpecThatWidensItsPolicy: a dispatcher that does not
// know the operator's policy accepts the spec; the worker fails the task,
// naming the field.
func TestWorkerRefusesASpecThatWidensItsPolicy(t *testing.T) {
	b := setup(t, fleettest.Options{Workers: 1, Worker: func(_ int, c *worker.Config) {
		c.Permissions = permission.Policy{Mode: permission.ModeAsk}
	}}, dispatcher.Config{})
	spec := fleettest.Spec("wide", fleettest.Step{Text: "ok"})
	spec.Permissions = &permission.Policy{Mode: permission.ModeAllow}
	done := b.WaitDone(b.Submit(spec))
	if res := fleettest.Result(t, done); done.State != store.TaskFailed || done.Error != fleet.ReasonNotAllowed ||
		!strings.Contains(res.Error, "spec.permissions.mode") || !strings.Contains(res.Error, "wider") {
		t.Fatalf("task %s (%s): %q", done.State, done.Error, res.Error)
	}
}
