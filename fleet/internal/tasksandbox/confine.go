package tasksandbox

import (
	"fmt"

	"github.com/agentfleet/agentfleet/execenv"
	"github.com/agentfleet/agentfleet/execenv/sandbox"
)

// Confine builds a sandbox for work the worker does on a task's behalf
// before the task's own environment exists (the clone of its
// repository): cfg's workspace under bubblewrap with set's network,
// AllowHosts, AllowPrivate, ReadOnly and Env, as the uid of tree (the
// root task's id, as Env keys it), within the operator's limits. The
// operator's writable paths and variables and the task's sandbox spec do
// not apply: the work is the worker's, bounded by set alone.
//
// ok is false when local tasks run unconfined here (sandbox off, or auto
// without bubblewrap): the caller then does the work itself, as the
// task's commands would run. When the sandbox is on and bubblewrap
// cannot run, the error is a *RefusedError, as Env's. The caller cleans
// the sandbox up.
func (s State) Confine(cfg execenv.LocalConfig, set sandbox.Settings, tree string) (l *sandbox.Local, ok bool, err error) {
	if s.missing != nil {
		return nil, false, &RefusedError{fmt.Sprintf("local tasks run in a sandbox and %v; or set sandbox: off in this worker's configuration to run them unconfined",
			s.missing)}
	}
	if !s.on {
		return nil, false, nil
	}
	set.IDs, set.Tree, set.Limits = s.ids, tree, s.op.Limits
	if s.op.OnLimit != nil {
		set.OnLimit = func(h sandbox.LimitHit) { s.op.OnLimit(h.Limit) }
	}
	l, err = sandbox.NewLocal(cfg, set)
	if err != nil {
		return nil, false, err
	}
	return l, true, nil
}

// Hold keeps tree's uid taken until release is called, so that what the
// worker does for a task before its environment exists (Confine) and
// that environment (Env) run as the same uid, even when no other task
// of the tree holds it in between. It holds nothing when the sandbox is
// off; release is safe to call twice.
func (s State) Hold(tree string) (release func(), err error) {
	if !s.on || s.ids == nil {
		return func() {}, nil
	}
	_, release, err = s.ids.Acquire(tree)
	if err != nil {
		return nil, err
	}
	return release, nil
}
