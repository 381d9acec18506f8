package taskops_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/internal/taskops"
	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/store"
)

// TestRouterKeepsPinnedTasksPinned: every message of a task that works in
// an unshared local workspace goes to the worker holding its files, and
// every other one to its queue. (A budget release used to go to the queue
// whatever the task.)
func TestRouterKeepsPinnedTasksPinned(t *testing.T) {
	local := fleet.TaskSpec{Queue: "default"}
	shared := fleet.TaskSpec{Queue: "default", Environment: fleet.Environment{Kind: fleet.EnvLocal, Shared: true}}
	ran := store.Task{ID: uuid.New(), Queue: "bulk", WorkerID: "w1", Attempts: 2}
	fresh := store.Task{ID: uuid.New(), Queue: "bulk"}
	toW1, toBulk := queue.ToWorker("w1"), queue.ToQueueFor("bulk", 0, fleet.DefaultTenant)
	tests := []struct {
		name string
		got  queue.Outgoing
		to   queue.Target
		id   string
	}{
		{"start of a submitted task", taskops.StartMessage(fresh, time.Time{}), toBulk, "start:" + fresh.ID.String()},
		{"start of a pinned child", taskops.ChildStartMessage(fresh, local, "w1"), toW1, "start:" + fresh.ID.String()},
		{"start of a shared child", taskops.ChildStartMessage(fresh, shared, "w1"), queue.ToQueue("bulk"), "start:" + fresh.ID.String()},
		{"release of a pinned task", taskops.ReleaseMessage(ran, local, time.Time{}), toW1, "budget-release:" + ran.ID.String() + ":2"},
		{"release of a shared task", taskops.ReleaseMessage(ran, shared, time.Time{}), toBulk, "budget-release:" + ran.ID.String() + ":2"},
		{"resume of a pinned task", taskops.ResumeMessage(ran, local, "3", "c"), toW1, "resume:" + ran.ID.String() + ":3"},
		{"input of a pinned task", taskops.InputMessage(ran, local, "in-1"), toW1, "input:" + ran.ID.String() + ":in-1"},
		{"input of a shared task", taskops.InputMessage(ran, shared, "in-1"), toBulk, "input:" + ran.ID.String() + ":in-1"},
	}
	for _, tt := range tests {
		if tt.got.To != tt.to || tt.got.MsgID != tt.id {
			t.Errorf("%s: to %+v id %q; want %+v, %q", tt.name, tt.got.To, tt.got.MsgID, tt.to, tt.id)
		}
		if err := tt.got.Msg.Validate(); err != nil {
			t.Errorf("%s: %v", tt.name, err)
		}
	}
}

// A message pinned to a gone worker goes to its task's shared queue, or to
// the default queue when its task is unknown.
func TestRescueTargetIsTheSharedQueue(t *testing.T) {
	if got := taskops.RescueTarget(store.Task{Queue: "lint"}); got != queue.ToQueueFor("lint", 0, fleet.DefaultTenant) {
		t.Errorf("RescueTarget(queue lint) = %+v", got)
	}
	if got := taskops.RescueTarget(store.Task{}); got != queue.ToQueue(fleet.DefaultQueue) {
		t.Errorf("RescueTarget(unknown task) = %+v", got)
	}
}

// Every message of a task that goes to its queue goes to the level of its
// priority; a pinned one goes to its worker whatever its priority.
func TestRouterSendsToThePriorityLevel(t *testing.T) {
	local := fleet.TaskSpec{Queue: "default"}
	shared := fleet.TaskSpec{Queue: "default", Environment: fleet.Environment{Kind: fleet.EnvLocal, Shared: true}}
	urgent := store.Task{ID: uuid.New(), Queue: "bulk", Priority: 100, WorkerID: "w1"}
	later := store.Task{ID: uuid.New(), Queue: "bulk", Priority: -3}
	high, low := queue.ToQueueFor("bulk", 100, "default"), queue.ToQueueFor("bulk", -3, "default")
	if high == queue.ToQueue("bulk") || low == queue.ToQueue("bulk") || high == low || high == queue.ToQueueFor("bulk", 99, "default") {
		t.Fatalf("levels are not distinct targets: %v %v", high, low)
	}
	tests := []struct {
		name string
		got  queue.Target
		want queue.Target
	}{
		{"start", taskops.StartMessage(urgent, time.Time{}).To, high},
		{"start of a low task", taskops.StartMessage(later, time.Time{}).To, low},
		{"shared child", taskops.ChildStartMessage(urgent, shared, "w1").To, queue.ToQueueAt("bulk", 100)},
		{"pinned child", taskops.ChildStartMessage(urgent, local, "w1").To, queue.ToWorker("w1")},
		{"resume of a shared task", taskops.ResumeMessage(urgent, shared, "1", "").To, high},
		{"release of a shared task", taskops.ReleaseMessage(later, shared, time.Time{}).To, low},
		{"rescue", taskops.RescueTarget(urgent), high},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: to %v, want %v", tt.name, tt.got, tt.want)
		}
	}
}

// A root task's messages carry its concurrency key (its spec's, else its
// tenant); a child's none, so it never waits on its root's maximum.
func TestRouterSendsUnderTheConcurrencyKey(t *testing.T) {
	shared := fleet.TaskSpec{Queue: "q", Tenant: "team", Environment: fleet.Environment{Kind: fleet.EnvLocal, Shared: true}}
	keyed := shared
	keyed.ConcurrencyKey = "org_repo"
	root := store.Task{ID: uuid.New(), Queue: "q", Spec: []byte(`{"tenant":"team"}`)}
	repo := store.Task{ID: uuid.New(), Queue: "q", Spec: []byte(`{"tenant":"team","concurrency_key":"org_repo"}`)}
	child := store.Task{ID: uuid.New(), Queue: "q", ParentID: root.ID, Spec: []byte(`{"tenant":"team"}`)}
	tests := []struct {
		name string
		got  queue.Target
		want queue.Target
	}{
		{"start by tenant", taskops.StartMessage(root, time.Time{}).To, queue.ToQueueFor("q", 0, "team")},
		{"start by key", taskops.StartMessage(repo, time.Time{}).To, queue.ToQueueFor("q", 0, "org_repo")},
		{"resume by key", taskops.ResumeMessage(repo, keyed, "1", "").To, queue.ToQueueFor("q", 0, "org_repo")},
		{"child", taskops.ChildStartMessage(child, shared, "w1").To, queue.ToQueueAt("q", 0)},
		{"resume of a child", taskops.ResumeMessage(child, shared, "1", "").To, queue.ToQueueAt("q", 0)},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: to %v, want %v", tt.name, tt.got, tt.want)
		}
	}
}

// TestTravelingChildStartsAnywhere: a child whose workspace starts from
// the fleet git store (environment.store_base) starts on its queue, not
// on its parent's worker; once it ran, its messages go to the worker
// holding its files like any local task's. environment.children: local
// is the spawner's to honour (it sets no store_base): such a child is
// pinned as before.
func TestTravelingChildStartsAnywhere(t *testing.T) {
	travels := fleet.TaskSpec{Queue: "bulk", Environment: fleet.Environment{Kind: fleet.EnvLocal, StoreBase: strings.Repeat("a", 40)}}
	pinned := fleet.TaskSpec{Queue: "bulk", Environment: fleet.Environment{Kind: fleet.EnvLocal, WorkingDir: "/ws/p/.agentfleet-worktrees/k", Children: fleet.ChildrenLocal}}
	fresh := store.Task{ID: uuid.New(), Queue: "bulk", ParentID: uuid.New()}
	ran := fresh
	ran.WorkerID = "w2"
	if got := taskops.ChildStartMessage(fresh, travels, "w1").To; got != queue.ToQueueAt("bulk", 0) {
		t.Errorf("a traveling child starts at %v, want its queue", got)
	}
	if got := taskops.ChildStartMessage(fresh, pinned, "w1").To; got != queue.ToWorker("w1") {
		t.Errorf("a pinned child starts at %v, want its parent's worker", got)
	}
	if got := taskops.ResumeMessage(ran, travels, "1", "").To; got != queue.ToWorker("w2") {
		t.Errorf("a traveling child that ran resumes at %v, want the worker holding its files", got)
	}
	if !taskops.Travels(travels) || taskops.Travels(pinned) {
		t.Error("Travels")
	}
}

// A released task goes to the front lane of its key, where it keeps its
// place (a key's maximum counts its front lane too: queue's gates).
func TestHoldReleaseGoesToTheFrontLaneOfItsKey(t *testing.T) {
	task := store.Task{ID: uuid.New(), Queue: "bulk", Priority: 3}
	o := taskops.HoldReleaseMessage(task, 7, time.Time{})
	if want := queue.ToQueueFor("bulk", 3, fleet.DefaultTenant).Front(); o.To != want || o.MsgID != "hold-release:"+task.ID.String()+":7" {
		t.Errorf("released to %v with id %s; want %v", o.To, o.MsgID, want)
	}
}
