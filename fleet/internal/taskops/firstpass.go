package taskops

import (
	"context"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/store"
)

// waitOver reports whether the wait wf of parent is over: every child it
// names has ended or, for a FirstPass wait (a best-of-N task waiting for
// its attempts, fleet.BestOfN), one of them succeeded. One Children read
// answers for all of them.
func (c *Completer) waitOver(ctx context.Context, parent uuid.UUID, wf fleet.WaitingFor) (bool, error) {
	if len(wf.Children) == 0 {
		return false, nil
	}
	kids, err := c.Store.Children(ctx, store.ChildrenParams{ParentID: parent})
	if err != nil {
		return false, err
	}
	state := make(map[uuid.UUID]store.TaskState, len(kids.Children))
	for _, k := range kids.Children {
		state[k.ID] = k.State
	}
	all := true
	for _, id := range wf.Children {
		if wf.FirstPass && state[id] == store.TaskSucceeded {
			return true, nil
		}
		all = all && state[id].Terminal()
	}
	return all, nil
}
