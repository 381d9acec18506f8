// Package spawn is the fleet's agent.Spawner: how a session on a worker
// starts, waits for, steers and closes its subagents.
//
// Its contract:
//
//   - Every subagent is a child task in the store, which any worker may run
//     (or the parent's worker, when it works in the parent's local
//     workspace: the files are there; see Across machines for how its
//     files travel instead). Its agent id is the child task id.
//   - Spawn is idempotent per spawn_agent call id: a resumed parent that
//     runs the call again gets the same child, and a child is enqueued only
//     while it is queued.
//   - Wait returns the result of a child that has ended, its work merged
//     into the parent's tree when it had a worktree (see Worktrees); for
//     one still active it parks the parent (agent.ErrParked) and
//     remembers the child (Spawner.Awaited), so the worker wakes the
//     parent at its end.
//   - SendInput steers a running child over its control subject, stores the
//     input (StoreInput) for a queued or parked one, and reopens an ended
//     one (Fleet.Reopen): the input is stored, the task goes back to queued
//     and a message runs it again. A cancelled child takes no input.
//   - Close cancels the child and its whole subtree with
//     the completer's CancelTree (fleet/internal/taskops), the one rule
//     the API's cancel applies too.
//
// # Worktrees
//
// A child that may write, of a parent whose local working directory is
// the top of a git work tree, works in a git worktree of its own, so that
// children editing the same files do not overwrite each other:
//
//   - Spawn snapshots the parent's working tree as it is (uncommitted
//     changes and untracked files included, ignored ones not) into a
//     commit on top of HEAD, built in a copy of the parent's index, so its
//     index, HEAD and files are untouched; records it as
//     refs/agentfleet/base/KEY; and adds the worktree
//     WorktreesDir/KEY (.agentfleet-worktrees/KEY in the parent's working
//     directory, listed in the repository's info/exclude) on branch
//     agentfleet/KEY at that commit. KEY is derived from the parent and
//     the spawn_agent call id, so a parent re-running the call finds the
//     worktree it made. The child's working_dir is the worktree (or the
//     subdirectory of it asked for), which the worker resolves
//     beneath its workspace root as any subagent's.
//   - Wait on an ended child (succeeded or failed: a failed child's
//     partial work is merged too, and its result says it failed) merges
//     its work back before returning its result: the worktree's files (as
//     `git add --all` sees them: what .gitignore ignores, build output
//     typically, stays behind) become a commit on the child's branch (its
//     own commits, where it could make them, are flattened into it) and
//     the worktree is removed; the parent's current files become a
//     commit on the same base; git merge-tree merges the two (the base is
//     their merge base). A clean merge is checked out into the parent's
//     working tree only (read-tree -m -u through a copy of its index: the
//     parent's index and HEAD do not change, the child's files show as
//     changes of its tree), the branch is deleted, and the result ends
//     with the files that changed. A conflict applies nothing: the result
//     ends with "CONFLICT", the files in conflict and the branch that
//     keeps the child's work; each later wait on the child tries the
//     merge again until the parent deletes the branch (so a wait after
//     the parent took the child's changes by hand merges nothing and
//     cleans up). Merges and spawns of one parent run one at a time.
//   - A closed (cancelled) child is not merged: its session may still be
//     writing as the cancel reaches it. The result says where its
//     worktree is; it stays there, as do the worktrees of children the
//     parent never waits for (a delivery leaves them out).
//   - send_input that reopens an ended child gives it its worktree back
//     first: a new one of the parent's tree after a merge, its kept
//     branch after a conflict.
//   - A spawn refused after its worktree was made (a bad working_dir)
//     removes it. A child's directory that is no longer a worktree (taken
//     apart by hand) is reported by wait, never taken for merged.
//
// The git runs in the parent's environment (Parent.Env), so under its
// sandbox as the task's own commands do, with hooks (core.hooksPath
// /dev/null), fsmonitor, automatic gc and external diff off. Filters and
// merge drivers the repository's config names are the task's own
// programs and run with the task's rights.
//
// Who shares the parent's tree instead, as every child did before:
//   - a read-only child: spawn_agent's read_only argument, or a permission
//     mode plan inherited from the parent (ReadOnly). A read_only child's
//     permissions are its parent's with mode plan (readonly.go), enforced by
//     its worker's permission layer like any spec policy: edits, writes,
//     shell commands and other state-changing tools are refused, reads and
//     searches run (see agent/permission, readonly.go, for why the shell is
//     refused whole);
//   - a parent whose working directory is not a git repository, or not
//     the top of its work tree (a subdirectory, or a .git the sandbox
//     does not show): its children share its files and may overwrite
//     each other's edits, as before; nothing is said in the wait result;
//   - an SSH environment (the files are on another host), and a parent
//     whose environment is not known (Parent.Env nil).
//
// A worktree's .git names the parent's repository (<parent>/.git/worktrees/
// <key>), which a sandbox binding the child's directory alone would not
// show. The child's worker therefore binds the parent's .git into the
// child's sandbox too, read-only and as opened beneath its root (see
// fleet/worker worktree_git.go): git status, diff, log and show work in
// the child; nothing of the parent's repository (refs, objects, hooks,
// config, the worktree's index) can be written from it, so git add and
// commit fail there, and its edits reach the parent by the merge alone.
// Without a sandbox the child's git works on its branch.
//
// # Across machines
//
// With a fleet git store (Fleet.Git; fleet/internal/gitstore), a child
// that would get a worktree travels instead (travel.go), unless the
// parent's spec says environment.children: local or the child asks for a
// working_dir of its own (a subdirectory of the parent's tree, which
// only a worktree has):
//
//   - Spawn snapshots the parent's files as a worktree spawn does, as a
//     commit on its HEAD, and pushes it (store.sh snap, Workspace.Push)
//     as the store's base/KEY and the parent's state/<id>; the child's
//     spec names it (environment.store_base) with the parent's repo, ref
//     and image, and no working_dir, so the router starts it on its queue
//     (taskops.Travels) and any worker may run it.
//   - The child's worker (fleet/worker gitstore.go) clones as for any
//     task, then Restore checks the commit out on branch agentfleet/work;
//     at its end PushResult pushes its files as one commit on that base
//     (its own commits flattened in) as its state/<id>, before the end is
//     written.
//   - Wait on the ended child fetches that commit once into branch
//     agentfleet/<child id> (refs/agentfleet/fetched/<child id> says it
//     was) and merges it with worktree.sh's merge: the same clean merge,
//     conflict note and kept branch as a worktree's. A clean merge, a
//     spawn and a park on a traveling child push the parent's state, so a
//     resume on another worker (its worker died) restores it (Restore:
//     the workspace lacks the marker .git/agentfleet-store a push or load
//     leaves).
//   - A child whose work never reached the store (it ended before
//     pushing) is reported so, and nothing is merged; a closed child is
//     not merged.
//
// All git on a workspace runs in its environment (store.sh), as the
// task's own commands; the worker only carries the bundle files between
// the workspace's .git (opened beneath it, links refused) and the store.
//
// A Spawner is built per run of the parent from a Fleet (the worker's
// store, queue and id) and a Parent (the task, its spec, its working
// directory, its session's settings). What it knows lives in the store, so
// a resumed parent gets a fresh one. The errors it returns are read by the
// model: they say what to do next.
package spawn
