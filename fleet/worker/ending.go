package worker

import (
	"context"
	"sync"

	"github.com/google/uuid"
)

// A task that ends on this worker and is reopened at once (a follow-up, a
// child's late input) may be claimed here again before its first run has
// removed its workspace: the end is written first (finish, outcome.go),
// the workspace removed after. Without a fence the removal took the new
// round's workspace from under it (its commands failed with "no such
// file"). The run that writes an end therefore holds the task's ending
// until its cleanup is done, and prepareWorkspace waits for it. Only
// workspaces this worker owns are at stake, so the fence is in process.

// endings are the tasks whose end a run of this worker is writing.
type endings struct {
	mu   sync.Mutex
	byID map[uuid.UUID]chan struct{} // closed when the end's cleanup is done
}

// hold marks id as ending; release ends the mark.
func (e *endings) hold(id uuid.UUID) (release func()) {
	done := make(chan struct{})
	e.mu.Lock()
	if e.byID == nil {
		e.byID = map[uuid.UUID]chan struct{}{}
	}
	e.byID[id] = done
	e.mu.Unlock()
	return func() {
		e.mu.Lock()
		if e.byID[id] == done {
			delete(e.byID, id)
		}
		e.mu.Unlock()
		close(done)
	}
}

// wait returns once no run is ending id, or with ctx's error.
func (e *endings) wait(ctx context.Context, id uuid.UUID) error {
	e.mu.Lock()
	done := e.byID[id]
	e.mu.Unlock()
	if done == nil {
		return nil
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
