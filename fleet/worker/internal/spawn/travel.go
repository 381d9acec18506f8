package spawn

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/agent"
	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/internal/gitstore"
	"github.com/agentfleet/agentfleet/store"
)

// placeChild decides where a new child works: on any worker, from a
// snapshot of the parent's files pushed to the fleet git store (base, the
// commit; dir ""), when its tree travels (travels); else in dirFor's
// directory on this worker.
func (s *Spawner) placeChild(ctx context.Context, req agent.SpawnRequest) (dir, base string, err error) {
	if !s.travels(ctx, req) {
		dir, err = s.dirFor(ctx, req) // readonly.go
		return dir, "", err
	}
	key := s.worktreeKey(req.CallID)
	s.gitMu.Lock()
	defer s.gitMu.Unlock()
	base, err = s.workspace().Push(ctx, "refs/agentfleet/sent/"+key, "", "the tree subagent "+key+" started from",
		gitstore.BaseRef(key), gitstore.StateRef(s.p.Task.ID))
	if errors.Is(err, ErrNotTop) {
		dir, err = s.dirFor(ctx, req) // the script found no tree of its own: shared, as before
		return dir, "", err
	}
	if err != nil {
		return "", "", fmt.Errorf("cannot send your files to the subagent: %w; spawn it again, or ask the operator (environment.children: local keeps subagents on this worker)", err)
	}
	return "", base, nil
}

// travels says whether a new child of this parent works from the fleet
// git store, on any worker: the worker has a store, the child may write
// (a read-only one shares the parent's tree), asks for no working_dir of
// its own (a subdirectory of the parent's tree: it gets a worktree here),
// and the parent's workspace is local, not shared, not pinned
// (environment.children: local) and may be a git work tree.
func (s *Spawner) travels(ctx context.Context, req agent.SpawnRequest) bool {
	env := s.p.Spec.Environment
	if s.f.Git == nil || req.ReadOnly || req.WorkingDir != "" || env.Shared || env.Children == fleet.ChildrenLocal {
		return false
	}
	return s.mayWorktree(ctx)
}

// workspace is the parent's workspace as the store moves it.
func (s *Spawner) workspace() Workspace {
	t := s.p.Task
	tree := t.RootID
	if tree == uuid.Nil {
		tree = t.ID
	}
	return Workspace{Env: s.p.Env, Dir: s.p.WorkingDir, Git: s.f.Git, Tree: tree, Task: t.ID}
}

// pushState stores the parent's files as its StateRef, so that a resume
// on another worker (its worker died) finds them. Failures are logged:
// the files are still here.
func (s *Spawner) pushState(ctx context.Context) {
	s.gitMu.Lock()
	defer s.gitMu.Unlock()
	if _, err := s.workspace().Push(ctx, "refs/agentfleet/state", "", "the files of task "+s.p.Task.ID.String(),
		gitstore.StateRef(s.p.Task.ID)); err != nil {
		s.p.Log.Warn("pushing this task's files to the fleet git store", "err", err)
	}
}

// traveled reports whether child t works from the store.
func traveled(t store.Task) bool {
	spec, err := fleet.DecodeSpec(t.Spec)
	return err == nil && spec.Environment.StoreBase != ""
}

// mergeFromStore merges the work of ended child t, which worked from the
// store, into the parent's working directory: its result (its StateRef)
// is fetched into branch agentfleet/<child id> once, and worktree.sh's
// merge takes it from there, as for a worktree (see the package doc).
// A clean merge is pushed as the parent's state.
func (s *Spawner) mergeFromStore(ctx context.Context, t store.Task) string {
	key, branch := t.ID.String(), BranchOf(t.ID.String())
	if t.State == store.TaskCancelled {
		return "[this subagent was closed, so its work was not merged into your working tree]"
	}
	ws := s.workspace()
	s.gitMu.Lock()
	res, err := func() (string, error) {
		refs, err := ws.Git.Refs(ctx, ws.Tree, ws.Task)
		if err != nil {
			return "", err
		}
		result := refs[gitstore.StateRef(t.ID)]
		if result == "" {
			return "lost", nil
		}
		if done, err := ws.Fetched(ctx, key); err != nil || done == result {
			return "", err // fetched before: the merge below retries or finds nothing
		}
		return "", ws.Load(ctx, result, "branch", key)
	}()
	var note string
	if err == nil && res == "" {
		note, err = s.runMerge(ctx, key, "")
	}
	s.gitMu.Unlock()
	switch {
	case err != nil:
		s.p.Log.Warn("merging a subagent's work from the fleet git store", "agent_id", t.ID, "err", err)
		return fmt.Sprintf("[merging this subagent's work into your working tree failed: %v. Wait on it again to retry; once fetched, its work is on branch %s]", err, branch)
	case res == "lost":
		return "[this subagent's work did not reach the fleet git store (it ended before storing it), so nothing was merged]"
	}
	if note != "" && !isConflict(note) {
		s.pushState(ctx)
	}
	return note
}
