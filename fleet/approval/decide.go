package approval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/agent"
	"github.com/agentfleet/agentfleet/agent/permission"
	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/internal/taskops"
	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/store"
)

// ClaimerPrefix starts the worker id under which Decide holds a task for
// the moment it takes to record an answer; the rest is the id of the
// worker that parked it, so a sweep can resume a task whose Decide died.
const ClaimerPrefix = "approvals:"

// finishTimeout bounds recording an answer and sending the resume once the
// task is claimed.
const finishTimeout = 30 * time.Second

// ErrNotPending: the task does not wait for an answer to that call (it was
// answered already, expired, or the task is not waiting). A 409.
var ErrNotPending = errors.New("approval: the call is not pending")

// Store is what Decide and Sweep need of the store.
type Store interface {
	GetTask(ctx context.Context, p store.GetTaskParams) (store.Task, error)
	ClaimTask(ctx context.Context, p store.ClaimTaskParams) (store.Task, error)
	TransitionTask(ctx context.Context, p store.TransitionTaskParams) (store.Task, error)
	GetSession(ctx context.Context, p store.GetSessionParams) (store.Session, error)
	ListTasks(ctx context.Context, p store.ListTasksParams) (store.TaskPage, error)
	LoadTurns(ctx context.Context, p store.LoadTurnsParams) ([]store.Turn, error)
}

// Queue is what Decide needs of the queue: publishing a message the
// router (fleet/internal/taskops) built.
type Queue interface {
	Send(ctx context.Context, to queue.Target, msg queue.TaskMessage, msgID string) (queue.EnqueueResult, error)
}

// Decision is a person's answer to one pending call.
type Decision struct {
	TaskID   uuid.UUID
	CallID   string
	Approve  bool
	Reason   string
	Remember bool // for the rest of the task, for the same tool and rule
	// By is who answered: the authenticated principal's ID as the API
	// sets it ("token:<id>", "bootstrap", ...), "nats" for an answer on
	// the approvals subject, "expiry" for the sweep; "api" when empty.
	// It is never a name the request carries.
	By string
}

// Decide records d and resumes the task (see the package doc). It returns
// the call that was pending; ErrNotPending (wrapped, saying why) when the
// task does not wait for it, store.ErrNotFound when there is no such task.
func Decide(ctx context.Context, st Store, q Queue, d Decision) (fleet.PendingApproval, error) {
	t, err := st.GetTask(ctx, store.GetTaskParams{ID: d.TaskID})
	if err != nil {
		return fleet.PendingApproval{}, err
	}
	pa, wf, err := pendingCall(t, d.CallID)
	if err != nil {
		if t.State == store.TaskQueued && answeredLast(ctx, st, t.ID, d.CallID) {
			return pa, resendResume(ctx, q, t, d.CallID)
		}
		return pa, err
	}
	claimer := ClaimerPrefix + t.WorkerID
	if _, err := st.ClaimTask(ctx, store.ClaimTaskParams{ID: t.ID, WorkerID: claimer, From: []store.TaskState{store.TaskWaiting}}); err != nil {
		if errors.Is(err, store.ErrConflict) {
			return pa, fmt.Errorf("%w: task %s changed meanwhile (answered by someone else, or cancelled)", ErrNotPending, t.ID)
		}
		return pa, err
	}
	// Holding the task now: finish even if the caller goes away.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), finishTimeout)
	defer cancel()
	if err := record(ctx, st, t, claimer, pa, d); err != nil {
		release(ctx, st, t, claimer)
		return pa, err
	}
	return pa, resume(ctx, q, t, wf, d.CallID)
}

// pendingCall returns the pending call callID of a waiting task.
func pendingCall(t store.Task, callID string) (fleet.PendingApproval, fleet.WaitingFor, error) {
	if t.State != store.TaskWaiting {
		return fleet.PendingApproval{}, fleet.WaitingFor{}, fmt.Errorf("%w: task %s is %s, not waiting for an approval of call %q", ErrNotPending, t.ID, t.State, callID)
	}
	wf, err := fleet.DecodeWaitingFor(t.WaitingFor)
	if err != nil {
		return fleet.PendingApproval{}, wf, fmt.Errorf("reading what task %s waits for: %w", t.ID, err)
	}
	pa, ok := wf.Approval(callID)
	if !ok {
		return pa, wf, fmt.Errorf("%w: task %s waits for no answer to call %q (%s)", ErrNotPending, t.ID, callID, pendingIDs(wf))
	}
	return pa, wf, nil
}

func pendingIDs(wf fleet.WaitingFor) string {
	if len(wf.Approvals) == 0 {
		return "it waits for no approval"
	}
	ids := make([]string, len(wf.Approvals))
	for i, a := range wf.Approvals {
		ids[i] = a.CallID
	}
	return fmt.Sprintf("pending: %v", ids)
}

// record appends the answer as a permission turn and queues the task, in
// one write fenced by the claim.
func record(ctx context.Context, st Store, t store.Task, claimer string, pa fleet.PendingApproval, d Decision) error {
	sess, err := st.GetSession(ctx, store.GetSessionParams{ID: t.ID})
	if err != nil {
		return fmt.Errorf("reading the session of task %s: %w", t.ID, err)
	}
	by := d.By
	if by == "" {
		by = "api"
	}
	answer := permission.Answer{Approved: d.Approve, Reason: d.Reason, Remember: d.Remember, By: by}
	turn := agent.AnswerTurn(int(sess.LastSeq), request(pa), answer, time.Now())
	payload, err := json.Marshal(turn)
	if err != nil {
		return err
	}
	_, err = st.TransitionTask(ctx, store.TransitionTaskParams{ID: t.ID, From: store.TaskRunning, To: store.TaskQueued, WorkerID: claimer,
		Append: &store.AppendTurnsParams{SessionID: t.ID, OwnerWorkerID: claimer,
			Turns: []store.NewTurn{{Seq: sess.LastSeq + 1, Kind: string(turn.Kind), Payload: payload}}}})
	return err
}

// release gives a task claimed by Decide back to waiting, as it was (t is
// the task as read before the claim).
func release(ctx context.Context, st Store, t store.Task, claimer string) {
	_, _ = st.TransitionTask(context.WithoutCancel(ctx), store.TransitionTaskParams{ID: t.ID, From: store.TaskRunning,
		To: store.TaskWaiting, WorkerID: claimer, WaitingFor: t.WaitingFor})
}

// resume publishes the task's deduplicated resume. t is the task as read
// before the claim: its WorkerID is the worker that parked it.
func resume(ctx context.Context, q Queue, t store.Task, wf fleet.WaitingFor, callID string) error {
	spec, err := fleet.DecodeSpec(t.Spec)
	if err != nil {
		return fmt.Errorf("task %s: %w", t.ID, err)
	}
	o := taskops.ResumeMessage(t, spec, wf.WaitID+"-approval-"+callID, "")
	if _, err := q.Send(ctx, o.To, o.Msg, o.MsgID); err != nil {
		return fmt.Errorf("the answer is recorded and task %s queued, but its resume was not sent (%w); answer again to resend it", t.ID, err)
	}
	return nil
}

// request is the question the session asked that pa records.
func request(pa fleet.PendingApproval) permission.Request {
	return permission.Request{CallID: pa.CallID, Tool: pa.Tool, Arguments: pa.Arguments, Rule: pa.Rule,
		Reason: pa.Reason, Summary: pa.Summary}
}

// answeredLast reports whether the last turn of the task's session is an
// answer to callID: a Decide recorded it and queued the task, and then
// could not send the resume.
func answeredLast(ctx context.Context, st Store, id uuid.UUID, callID string) bool {
	sess, err := st.GetSession(ctx, store.GetSessionParams{ID: id})
	if err != nil || sess.LastSeq == 0 {
		return false
	}
	turns, err := st.LoadTurns(ctx, store.LoadTurnsParams{SessionID: id, AfterSeq: sess.LastSeq - 1})
	if err != nil || len(turns) != 1 || turns[0].Kind != string(agent.TurnPermission) {
		return false
	}
	var last agent.Turn
	return json.Unmarshal(turns[0].Payload, &last) == nil && last.Permission != nil &&
		last.Permission.Kind == permission.RecordAnswer && last.Permission.CallID == callID
}

// resendResume sends again the resume of a task whose answer was recorded
// without its resume, and says so with ErrNotPending: the call was
// answered before.
func resendResume(ctx context.Context, q Queue, t store.Task, callID string) error {
	t.WorkerID = strings.TrimPrefix(t.WorkerID, ClaimerPrefix) // the worker that parked it
	if err := resume(ctx, q, t, fleet.WaitingFor{WaitID: "resend"}, callID); err != nil {
		return err
	}
	return fmt.Errorf("%w: call %q of task %s was answered already; its resume is sent again", ErrNotPending, callID, t.ID)
}
