package taskops

import (
	"context"
	"fmt"
	"slices"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/store"
)

// AfterEnd applies the after-end rule to t, a final task, again: announce
// it (Completer.Announce), wake its parent if the parent waits for it, and
// cancel its live children unless its spec lets them run. Everything in it
// is idempotent, so a redelivered message of a finished task runs it
// again in case a crash cut it short.
func (c *Completer) AfterEnd(ctx context.Context, t store.Task) error {
	err := c.announce(ctx, End{}, t)
	c.afterEnd(ctx, t, true)
	return err
}

// afterEnd wakes the parent and applies the child policy; children false
// says the task has none for sure, which spares a store read per leaf.
func (c *Completer) afterEnd(ctx context.Context, t store.Task, children bool) {
	if err := c.wakeParent(ctx, t); err != nil {
		c.log().Warn("waking the parent", "task_id", t.ID, "parent_id", t.ParentID, "err", err)
	}
	if children {
		c.endChildren(ctx, t)
	}
}

// endChildren cancels the live children of an ended task unless its
// child_policy lets them run.
func (c *Completer) endChildren(ctx context.Context, t store.Task) {
	spec, err := fleet.DecodeSpec(t.Spec)
	if err != nil {
		c.log().Warn("reading the child policy of an ended task; cancelling its children, the default", "task_id", t.ID, "err", err)
	}
	if spec.ChildPolicy == fleet.ChildLetRun {
		return
	}
	kids, err := c.Store.Children(ctx, store.ChildrenParams{ParentID: t.ID})
	if err != nil || kids.AllTerminal() {
		return
	}
	for _, k := range kids.Children {
		if k.State.Terminal() {
			continue
		}
		res, err := c.CancelTree(ctx, k.ID, fleet.ReasonParentEnded)
		if err == nil {
			err = res.AbortErr
		}
		if err != nil {
			c.log().Warn("cancelling a child of an ended task", "task_id", k.ID, "err", err)
		}
	}
}

// wakeParent resumes t's parent when the parent is parked waiting for t and
// every other child it waits for has ended too. Every process that records
// the end of a child of that wait publishes the same message id, so one
// resume is enqueued.
func (c *Completer) wakeParent(ctx context.Context, t store.Task) error {
	if t.ParentID == uuid.Nil {
		return nil
	}
	p, err := c.Store.GetTask(ctx, store.GetTaskParams{ID: t.ParentID})
	if err != nil || p.State != store.TaskWaiting {
		return err
	}
	wf, err := fleet.DecodeWaitingFor(p.WaitingFor)
	if err != nil {
		return fmt.Errorf("parent %s: %w", p.ID, err)
	}
	if !slices.Contains(wf.Children, t.ID) {
		return nil
	}
	_, err = c.ResumeIfDone(ctx, p, wf, t.ID)
	return err
}

// ResumeIfDone resumes parked, a task waiting for wf, when every child wf
// names has ended (or, with wf.FirstPass, one of them succeeded: the
// wake-on-first-pass of a best-of-N task, firstpass.go), and reports
// whether it did. last is the child whose end
// completes the wait (uuid.Nil: the last one wf names). The worker calls
// it right after parking, for children that ended before the park.
func (c *Completer) ResumeIfDone(ctx context.Context, parked store.Task, wf fleet.WaitingFor, last uuid.UUID) (bool, error) {
	if done, err := c.waitOver(ctx, parked.ID, wf); !done || err != nil {
		return false, err
	}
	if last == uuid.Nil {
		last = wf.Children[len(wf.Children)-1]
	}
	spec, err := fleet.DecodeSpec(parked.Spec)
	if err != nil {
		return false, fmt.Errorf("task %s: %w", parked.ID, err)
	}
	o := ResumeMessage(parked, spec, wf.WaitID, last.String())
	res, err := c.Queue.Send(ctx, o.To, o.Msg, o.MsgID)
	if err == nil && !res.Duplicate && c.Resumed != nil {
		c.Resumed()
	}
	return err == nil, err
}
