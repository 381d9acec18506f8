package dispatcher

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/fleet/api"
	"github.com/agentfleet/agentfleet/fleet/internal/taskops"
	"github.com/agentfleet/agentfleet/store"
)

// set_priority: each queued root task the filter selects gets the new
// priority in the store (a compare-and-set on queued, so a task that
// started meanwhile is skipped and keeps running as it is). Each such task
// gets a new start message at its new priority level through the router
// (taskops.PriorityMessage), and the move is recorded with the pauses
// (holds/moves.go) so that workers drop its old message: it takes its
// place at the new level as if submitted now. A held (paused) task changes
// priority and is released at its new level when resumed.

// bulkSetPriority runs set_priority.
func (d *Dispatcher) bulkSetPriority(ctx context.Context, j *bulkJob, prio int, f api.BulkFilter, sc bulkScope) error {
	ps, ok := d.store.(store.PrioritySetter)
	if !ok {
		return errors.New("this store cannot change a task's priority (SQLite and Postgres can)")
	}
	s, err := d.pauses(ctx)
	if err != nil {
		return err
	}
	return d.eachBulkPage(ctx, api.BulkSetPriority, f, sc, func(ts []store.Task) error {
		d.bulk.update(j, func(v *api.BulkJob) { v.Matched += len(ts) })
		for _, t := range ts {
			moved, err := d.setPriority(ctx, ps, t, prio, s.Moved)
			switch {
			case errors.Is(err, store.ErrConflict): // started meanwhile: keeps running
				d.bulk.update(j, func(v *api.BulkJob) { v.Done++; v.Skipped++ })
			case err != nil:
				d.bulkFailed(j, fmt.Errorf("set_priority %s: %w", t.ID, err))
			default:
				d.bulk.update(j, func(v *api.BulkJob) {
					v.Done++
					if moved {
						v.Moved++
					}
				})
			}
		}
		return nil
	})
}

// setPriority sets t's priority and, when it changes, publishes its start
// message at the new level and records the move.
func (d *Dispatcher) setPriority(ctx context.Context, ps store.PrioritySetter, t store.Task, prio int,
	record func(context.Context, uuid.UUID, uint64) error) (bool, error) {
	if t.Priority == prio {
		return false, nil
	}
	nt, err := ps.SetQueuedPriority(ctx, t.ID, prio)
	if err != nil {
		return false, err
	}
	o := taskops.PriorityMessage(nt, time.Now())
	res, err := d.queue.Send(ctx, o.To, o.Msg, o.MsgID)
	if err != nil {
		return false, fmt.Errorf("publishing its start at the new priority (its priority is changed, but it starts from its old place): %w", err)
	}
	return true, record(ctx, nt.ID, res.StreamSeq)
}
