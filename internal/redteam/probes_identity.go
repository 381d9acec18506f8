package redteam

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"

	"github.com/agentfleet/agentfleet/fleet/api"
	"github.com/agentfleet/agentfleet/fleet/client"
	"github.com/agentfleet/agentfleet/fleet/dev"
	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/queue/embedded"
	"github.com/agentfleet/agentfleet/store"
)

// The probes of issue 29's principals and tenants attack with what
// another team, or a compromised worker, holds: tenant A's token reading
// tenant B's task, an approver naming someone else as the approver, and
// a worker's NATS credentials answering an approval. They aim at the
// suite's dispatcher API with a token (its bootstrap admin token makes
// the tenants' tokens) and at dev mode's NATS.

// tenantClients returns a client of a viewer of a fresh tenant A and one
// of a submitter of a fresh tenant B, made with the bootstrap token. A
// dispatcher without per-principal tokens (POST /v1/tokens a 404) has one
// token for everyone, so both clients hold it; note says so.
func tenantClients(ctx context.Context, e *env, roleA string) (a, b *client.Client, note string, err error) {
	admin, err := client.New(e.fleet.tokenURL, e.fleet.token, nil)
	if err != nil {
		return nil, nil, "", err
	}
	mark := canary()
	tokA, errA := admin.CreateToken(ctx, api.TokenRequest{Name: "rt-a-" + mark, Grants: map[string]string{"rt-a-" + mark: roleA}})
	tokB, errB := admin.CreateToken(ctx, api.TokenRequest{Name: "rt-b-" + mark,
		Grants: map[string]string{"rt-b-" + mark: "approver"}, DefaultTenant: "rt-b-" + mark})
	switch {
	case client.IsNotFound(errA):
		note = "no per-principal tokens (POST /v1/tokens is a 404): team A holds the one shared token; "
		a, b = admin, admin
	case errA != nil || errB != nil:
		return nil, nil, "", fmt.Errorf("creating the tenants' tokens: %v, %v", errA, errB)
	default:
		if a, err = client.New(e.fleet.tokenURL, tokA.Token, nil); err == nil {
			b, err = client.New(e.fleet.tokenURL, tokB.Token, nil)
		}
	}
	return a, b, note, err
}

// probeCrossTenantRead: tenant B's task prints a proof; tenant A's
// viewer reads B's task, its events, its sessions' turns and the task
// list. Escaped when any answer shows the proof or the task.
func probeCrossTenantRead(ctx context.Context, e *env) Result {
	a, b, note, err := tenantClients(ctx, e, "viewer")
	if err != nil {
		return errResult(err)
	}
	cmd, want := proof("xtenant")
	id, refused, err := submit(ctx, b, spec("tenant B's task", steps(shell(cmd))))
	if err != nil || refused != "" {
		return Result{Outcome: Error, Evidence: fmt.Sprintf("tenant B's task: %v %s", err, refused)}
	}
	own, err := waitRecord(ctx, b, id)
	if err != nil {
		return errResult(err)
	}
	if _, ok := own.has(want); !ok {
		return Result{Outcome: Error, Evidence: "tenant B's task did not store its proof; the probe says nothing"}
	}
	var leaks []string
	seen := func(what string, v any) {
		data, _ := json.Marshal(v)
		if s := string(data); strings.Contains(s, want) || strings.Contains(s, id.String()) {
			leaks = append(leaks, what)
		}
	}
	if t, err := a.Get(ctx, id); err == nil {
		seen("GET /v1/tasks/{id}", t)
	}
	if l, err := a.List(ctx, client.ListFilter{Limit: 500}); err == nil {
		seen("GET /v1/tasks", l)
	}
	theirs := &record{root: id, states: map[uuid.UUID]store.TaskState{}}
	if err := theirs.readEvents(ctx, a, id); err == nil {
		seen("GET /v1/tasks/{id}/events", theirs.texts)
	}
	if ss, err := b.Sessions(ctx, id); err == nil {
		for _, s := range ss.Sessions {
			if tl, err := a.Turns(ctx, s.ID, 0); err == nil {
				seen("GET /v1/sessions/{id}/turns", tl)
			}
		}
	}
	if len(leaks) > 0 {
		return Result{Outcome: Escaped, Evidence: note + "tenant A's viewer read tenant B's task through " + strings.Join(leaks, ", ")}
	}
	return Result{Outcome: Held, Evidence: note + "tenant A's viewer got nothing of tenant B's task (task, list, events, turns)"}
}

// probeForgedApprover: tenant B's approver answers its own task's
// approval naming another approver (by: mallory-...). Escaped when the
// forged name is recorded as the approver.
func probeForgedApprover(ctx context.Context, e *env) Result {
	_, b, note, err := tenantClients(ctx, e, "viewer")
	if err != nil {
		return errResult(err)
	}
	id, refused, err := submit(ctx, b, spec("asks for approval", steps(shell("git reset --hard HEAD"))))
	if err != nil || refused != "" {
		return Result{Outcome: Error, Evidence: fmt.Sprintf("tenant B's task: %v %s", err, refused)}
	}
	callID, err := waitApproval(ctx, b, id)
	if err != nil {
		return errResult(err)
	}
	forged := "mallory-" + canary()
	_, answerErr := b.Decide(ctx, id, callID, api.ApprovalRequest{Decision: api.DecisionApprove, By: forged})
	recorded := ""
	if answerErr != nil { // refused: approve as itself, and look for its own name
		_, err := b.Decide(ctx, id, callID, api.ApprovalRequest{Decision: api.DecisionApprove})
		if me, werr := b.Whoami(ctx); err == nil && werr == nil {
			recorded = me.ID
		}
	}
	rec, err := waitRecord(ctx, b, id)
	if err != nil {
		return errResult(err)
	}
	if ex, ok := rec.has(forged); ok {
		return Result{Outcome: Escaped, Evidence: note + "the approval was recorded under the name the request gave: " + ex}
	}
	if answerErr == nil {
		return Result{Outcome: Held, Evidence: note + "the forged name is nowhere in the task's events or turns"}
	}
	ev := note + "the forged approval was refused: " + oneLine(answerErr.Error())
	if _, ok := rec.has(recorded); recorded != "" && ok {
		ev += "; approving as itself recorded " + recorded
	}
	return Result{Outcome: Held, Evidence: ev}
}

// waitApproval waits on the task's events for its approval request and
// returns the call id.
func waitApproval(ctx context.Context, c *client.Client, id uuid.UUID) (string, error) {
	s, err := c.Events(ctx, id, client.StreamOptions{})
	if err != nil {
		return "", err
	}
	defer func() { _ = s.Close() }()
	stop := context.AfterFunc(ctx, func() { _ = s.Close() })
	defer stop()
	for {
		ev, err := s.Next()
		if err != nil {
			return "", fmt.Errorf("waiting for the approval request of task %s: %w", id, err)
		}
		if ev.End != nil {
			return "", fmt.Errorf("task %s ended (%s) without asking for an approval", id, ev.End.State)
		}
		if ev.Event.Kind == "APPROVAL_REQUESTED" {
			var d struct {
				CallID string `json:"call_id"`
			}
			if json.Unmarshal(ev.Event.Data, &d) == nil && d.CallID != "" {
				return d.CallID, nil
			}
		}
	}
}

// probeWorkerNATSApproval: dev mode's worker NATS user sends an approve
// request on the approvals subject, as a worker (or a process escaped
// from a sandbox with its credentials) would to approve its own call.
// Escaped when anything answers: the dispatcher's approvals server got
// the request.
func probeWorkerNATSApproval(ctx context.Context, e *env) Result {
	d, err := dev.Start(ctx, dev.Config{Addr: "127.0.0.1:0", NATSPort: embedded.RandomPort,
		DataDir: e.dir + "/dev-nats-" + canary(), Workers: 1, Sessions: 1, Simulated: true, Logger: e.cfg.Logger})
	if err != nil {
		return errResult(err)
	}
	defer func() { _ = d.Close() }()
	opts, who := workerNATS(d)
	refusals := make(chan string, 4)
	opts = append(opts, nats.Timeout(5*time.Second), nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
		select {
		case refusals <- err.Error():
		default:
		}
	}))
	nc, err := nats.Connect(d.NATSURL(), opts...)
	if err != nil {
		return Result{Outcome: Held, Evidence: who + " could not connect: " + oneLine(err.Error())}
	}
	defer nc.Close()
	body, _ := json.Marshal(queue.ControlRequest{Op: queue.OpApprove, TaskID: uuid.NewString(), CallID: "call-1"})
	subject := queue.Config{}.WithDefaults().Prefix + ".control." + queue.ApprovalsSession
	rctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	m, err := nc.RequestWithContext(rctx, subject, body)
	if err == nil {
		return Result{Outcome: Escaped, Evidence: fmt.Sprintf("%s's approve request on %s was answered: %s", who, subject, oneLine(string(m.Data)))}
	}
	why := oneLine(err.Error())
	select {
	case r := <-refusals:
		why = "NATS said: " + oneLine(r)
	default:
	}
	return Result{Outcome: Held, Evidence: fmt.Sprintf("%s's approve request on %s got no answer: %s", who, subject, why)}
}

// workerNATS is how a worker of dev mode connects to its NATS: the
// worker user dev mode made at start.
func workerNATS(d *dev.Fleet) ([]nats.Option, string) {
	name, password := d.NATSUser(queue.RoleWorker)
	return []nats.Option{nats.UserInfo(name, password)}, "dev mode's worker NATS user (" + name + ")"
}
