package taskops

import (
	"fmt"
	"time"

	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/store"
)

// HoldReleaseMessage starts a root task a pause held (fleet/internal/holds)
// once no pause holds it: at the level of its priority, on the front lane
// of its concurrency key, so that it keeps its place (queue: "Front
// lanes"; a key's maximum counts its front lane too). Its id carries the
// revision of the hold record, so dispatchers releasing the same hold
// publish it once and a task held again later is released again.
func HoldReleaseMessage(t store.Task, holdRevision uint64, enqueuedAt time.Time) queue.Outgoing {
	o := StartMessage(t, enqueuedAt)
	o.MsgID = fmt.Sprintf("hold-release:%s:%d", t.ID, holdRevision)
	o.To = o.To.Front()
	return o
}

// PriorityMessage starts a queued root task whose priority was changed
// (bulk set_priority) at the level of its new priority, as StartMessage.
// Its id carries the task's update time, so each change publishes once.
func PriorityMessage(t store.Task, enqueuedAt time.Time) queue.Outgoing {
	o := StartMessage(t, enqueuedAt)
	o.MsgID = fmt.Sprintf("priority:%s:%d", t.ID, t.UpdatedAt.UnixNano())
	return o
}
