package taskops

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/store"
)

// This file is the router: the one place that decides where a task's
// messages go (Target) and under which deduplication id (the *Message
// constructors). Every publisher of a task message (the dispatcher's
// submit and budget release, a spawning worker, a woken parent, a
// reopened child, an answered approval) builds it here.

// target is where a task's messages go: the worker that holds its files
// when it is pinned (a local workspace that is not shared) and has run
// there, else the level of its priority in its queue (queue.ToQueueAt). A pinned task that never ran goes to its queue
// unless the caller knows its holder (ChildStartMessage).
func target(t store.Task, spec fleet.TaskSpec) queue.Target {
	if pinned(spec) && t.WorkerID != "" {
		return queue.ToWorker(t.WorkerID)
	}
	q := t.Queue
	if q == "" {
		q = spec.Queue
	}
	return queue.ToQueueFor(q, t.Priority, fairnessKey(t, spec))
}

// fairnessKey is the concurrency key of a task's messages on its queue:
// its spec's (FairnessKey) for a root task, none for a child, whose tree
// was admitted with its root (a child counted against its root's maximum
// could wait forever for a slot its own parent holds).
func fairnessKey(t store.Task, spec fleet.TaskSpec) string {
	if t.ParentID != uuid.Nil {
		return ""
	}
	return spec.FairnessKey()
}

// storedKey is fairnessKey for a caller without the decoded spec: it reads
// the two fields it needs from the stored one (a spec it cannot read has
// the default tenant's key; the worker fails such a task).
func storedKey(t store.Task) string {
	var s struct {
		Tenant         string `json:"tenant"`
		ConcurrencyKey string `json:"concurrency_key"`
	}
	if t.ParentID != uuid.Nil {
		return ""
	}
	if json.Unmarshal(t.Spec, &s) != nil || queue.CheckConcurrencyKey(s.Tenant) != nil && s.Tenant != "" ||
		s.ConcurrencyKey != "" && queue.CheckConcurrencyKey(s.ConcurrencyKey) != nil {
		return fleet.DefaultTenant
	}
	return fleet.TaskSpec{Tenant: s.Tenant, ConcurrencyKey: s.ConcurrencyKey}.FairnessKey()
}

// pinned reports whether a task must run on the worker holding its files.
func pinned(spec fleet.TaskSpec) bool {
	return (spec.Environment.Kind == "" || spec.Environment.Kind == fleet.EnvLocal) && !spec.Environment.Shared
}

// Travels reports whether a task's workspace starts from the fleet git
// store (environment.store_base, set by the spawner), so that it may
// start on any worker.
func Travels(spec fleet.TaskSpec) bool { return spec.Environment.StoreBase != "" }

// RescueTarget is where a message pinned to a worker that is gone for
// good goes: its task's shared queue, where any worker takes it and
// resumes the session from its recorded turns in a fresh workspace. A
// message whose task does not exist (t is the zero Task) goes to the
// default queue, whose worker terms it.
func RescueTarget(t store.Task) queue.Target {
	if t.Queue == "" {
		return queue.ToQueue(fleet.DefaultQueue)
	}
	return queue.ToQueueFor(t.Queue, t.Priority, storedKey(t))
}

// StartMessage starts a submitted task: to the level of its priority and
// the subject of its concurrency key in its queue (its files are made wherever it starts), under startMsgID so a
// repeated submission publishes it once.
func StartMessage(t store.Task, enqueuedAt time.Time) queue.Outgoing {
	return startMessage(t, queue.ToQueueFor(t.Queue, t.Priority, storedKey(t)), enqueuedAt)
}

// ChildStartMessage starts a spawned child. A pinned child works in its
// parent's workspace, so it goes to holder, the worker running the parent;
// any other goes to its queue: a shared one, and one whose tree travels
// (Travels: its workspace is made from the fleet git store wherever it
// runs). Once it ran, a traveling child is pinned to its worker like any
// local task (target): its files are there.
func ChildStartMessage(child store.Task, spec fleet.TaskSpec, holder string) queue.Outgoing {
	to := queue.ToQueueAt(child.Queue, child.Priority)
	if pinned(spec) && !Travels(spec) {
		to = queue.ToWorker(holder)
	}
	return startMessage(child, to, time.Time{})
}

func startMessage(t store.Task, to queue.Target, enqueuedAt time.Time) queue.Outgoing {
	return queue.Outgoing{To: to,
		Msg:   queue.TaskMessage{Type: queue.MsgStart, TaskID: t.ID.String(), EnqueuedAt: enqueuedAt},
		MsgID: startMsgID(t.ID)}
}

// ResumeMessage wakes a parked task at the end of its wait waitID (child:
// the task whose end completed it, if any). Every waker of one wait
// publishes the same id, so children ending together resume it once.
func ResumeMessage(t store.Task, spec fleet.TaskSpec, waitID, child string) queue.Outgoing {
	return queue.Outgoing{To: target(t, spec),
		Msg: queue.TaskMessage{Type: queue.MsgResume, TaskID: t.ID.String(), WaitID: waitID, ChildTaskID: child,
			TraceParent: spec.TraceParent},
		MsgID: resumeMsgID(t.ID.String(), waitID)}
}

// InputMessage runs a reopened task to answer its stored input name.
func InputMessage(t store.Task, spec fleet.TaskSpec, name string) queue.Outgoing {
	return queue.Outgoing{To: target(t, spec),
		Msg:   queue.TaskMessage{Type: queue.MsgInput, TaskID: t.ID.String(), InputID: name, TraceParent: spec.TraceParent},
		MsgID: inputMsgID(t.ID, name)}
}

// ReopenMessage runs a reopened task (Completer.Reopen) to answer its
// stored input name, under the id of InputMessage; t is the task as it
// ended. A task whose files can be made again anywhere goes to its queue,
// so any worker takes it: one that succeeded (its workspace was removed
// at its end) or pushed its delivery (its workspace is restored from the
// delivered branch). Any other, a failed task that delivered nothing,
// goes where InputMessage sends it: the worker that kept its files, when
// pinned.
func ReopenMessage(t store.Task, spec fleet.TaskSpec, name string) queue.Outgoing {
	o := InputMessage(t, spec, name)
	var res fleet.TaskResult
	_ = json.Unmarshal(t.Result, &res) // no result: nothing was delivered
	if t.State == store.TaskSucceeded || (res.Delivery != nil && res.Delivery.Pushed) {
		o.To = RescueTarget(t)
	}
	return o
}

// ReleaseMessage restarts a task a budget held. Its id carries the task's
// attempts, so two dispatchers releasing the same hold publish it once and
// a later hold of the same task is released again. A pinned task goes back
// to the worker that holds its files.
func ReleaseMessage(t store.Task, spec fleet.TaskSpec, enqueuedAt time.Time) queue.Outgoing {
	return queue.Outgoing{To: target(t, spec),
		Msg: queue.TaskMessage{Type: queue.MsgStart, TaskID: t.ID.String(), EnqueuedAt: enqueuedAt,
			TraceParent: spec.TraceParent},
		MsgID: releaseMsgID(t)}
}

// startMsgID is the Nats-Msg-Id of the message that starts a task: the
// dispatcher and a spawning worker publish it, and a repeated publish is a
// duplicate.
func startMsgID(task uuid.UUID) string { return "start:" + task.String() }

// inputMsgID is the Nats-Msg-Id of the message that delivers the stored
// input name to a reopened task: each input is enqueued once.
func inputMsgID(task uuid.UUID, name string) string { return "input:" + task.String() + ":" + name }

// resumeMsgID is the Nats-Msg-Id of the resume that ends a parked task's
// wait: every child of the wait that ends publishes the same id.
func resumeMsgID(task, waitID string) string { return "resume:" + task + ":" + waitID }

// releaseMsgID is the Nats-Msg-Id of a budget release: one per hold, as
// a hold counts as an attempt.
func releaseMsgID(t store.Task) string { return fmt.Sprintf("budget-release:%s:%d", t.ID, t.Attempts) }
