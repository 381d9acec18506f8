package worker

import (
	"path/filepath"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/execenv/sandbox"
	"github.com/agentfleet/agentfleet/fleet/worker/internal/spawn"
	"github.com/agentfleet/agentfleet/internal/beneath"
)

// Git in a subagent's worktree, under the sandbox.
//
// A child that works in a git worktree of its parent's repository
// (working_dir <parent>/<spawn.WorktreesDir>/<key>) has a .git file naming
// <parent>/.git/worktrees/<key>, which its sandbox, binding the child's
// directory only, would not show: git in the child would fail. So the
// child's sandbox also binds the parent's .git directory, read-only, at
// its own path. git status, diff, log and show then work in the child;
// nothing of the parent's repository can be written from it (refs,
// objects, hooks, config, the worktree's own index and HEAD all read-only),
// so git add, commit or stash fail there with a read-only file system. The
// child's edits reach the parent by the merge of its wait, which records
// them; a child that could commit would only confuse that merge.
//
// The .git is trusted only as opened: beneath the root the child's
// working_dir was resolved under, no link followed (internal/beneath), and
// bound as opened (sandbox.OpenedDir), so a parent that swaps its .git for
// a link cannot make the child's sandbox show another host directory. A
// parent whose .git is not a directory (itself a worktree) gives its
// children none: git fails in them as before.

// worktreeGit opens the parent's .git for a child working in one of its
// worktrees, keeping it open with the workspace; none for any other task.
func (r *run) worktreeGit() []sandbox.OpenedDir {
	env := r.spec.Environment
	if r.spec.ParentID == uuid.Nil || env.WorkingDir == "" || r.ws == nil {
		return nil
	}
	wd := filepath.Clean(env.WorkingDir)
	holder := filepath.Dir(wd)
	if filepath.Base(holder) != spawn.WorktreesDir {
		return nil
	}
	if _, err := uuid.Parse(filepath.Base(wd)); err != nil {
		return nil
	}
	root, rel, err := r.w.workingDirRoot(env, true)
	if err != nil {
		return nil
	}
	f, err := beneath.OpenDir(root, filepath.Join(filepath.Dir(filepath.Dir(rel)), ".git"))
	if err != nil {
		r.log.Debug("the parent's .git is not a directory this child may read; git will not work in its worktree", "err", err)
		return nil
	}
	r.ws.extra = append(r.ws.extra, f)
	return []sandbox.OpenedDir{{File: f, At: filepath.Join(filepath.Dir(holder), ".git")}}
}

// closeExtra closes what worktreeGit opened.
func (ws *workspace) closeExtra() {
	for _, f := range ws.extra {
		_ = f.Close()
	}
	ws.extra = nil
}
