package spawn

import (
	"context"
	_ "embed"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/agent/permission"
	"github.com/agentfleet/agentfleet/execenv"
	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/store"
)

// worktreeScript is the git of subagent worktrees, run by the parent's
// environment: MODE=spawn makes one, MODE=merge merges one back.
//
//go:embed worktree.sh
var worktreeScript string

// WorktreesDir is the directory of the parent's working directory that
// holds its children's worktrees, each named by its key. The script lists
// it in the repository's info/exclude, so the parent's git leaves it out.
const WorktreesDir = ".agentfleet-worktrees"

// worktreeTimeout bounds one run of the script (a snapshot of a large
// tree included).
const worktreeTimeout = 10 * time.Minute

// maxListed bounds the file names a merge note lists.
const maxListed = 40

// BranchOf is the branch that holds the work of the child whose worktree
// key is key.
func BranchOf(key string) string { return "agentfleet/" + key }

// worktreeKey is the key of the worktree of the parent's spawn_agent call
// callID: stable, so that a resumed parent running the call again finds
// the worktree it made.
func (s *Spawner) worktreeKey(callID string) string {
	return uuid.NewSHA1(s.p.Task.ID, []byte(callID)).String()
}

// childDir is the directory a new child works in: a worktree of its own
// (made now, or found made by an earlier run of the same call) when the
// parent's working directory is the top of a git work tree it can reach,
// the child may write, and the environment is local; else the parent's
// working directory, shared.
func (s *Spawner) childDir(ctx context.Context, callID string) (string, error) {
	if !s.mayWorktree(ctx) {
		return s.p.WorkingDir, nil
	}
	key := s.worktreeKey(callID)
	s.gitMu.Lock()
	defer s.gitMu.Unlock()
	res, err := s.runWorktree(ctx, "spawn", key)
	switch {
	case err != nil:
		return "", fmt.Errorf("cannot give the subagent a worktree of its own: %w; fix the repository (git status) or spawn it again", err)
	case res.ExitCode == 3:
		return s.p.WorkingDir, nil // not the top of a work tree git reaches: shared
	case res.ExitCode != 0:
		return "", fmt.Errorf("cannot give the subagent a worktree of its own: git failed (exit %d): %s; fix the repository (git status) or spawn it again",
			res.ExitCode, strings.TrimSpace(res.Stderr))
	}
	return filepath.Join(s.p.WorkingDir, WorktreesDir, key), nil
}

// restoreWorktree gives an ended child t that had a worktree its
// worktree back before it is reopened: a wait that merged its work
// removed it (a new one is made from the parent's tree, which has that
// work), and a conflict kept its work on its branch (checked out again).
// A worktree still there is left as it is.
func (s *Spawner) restoreWorktree(ctx context.Context, t store.Task) error {
	key, ok := s.childKey(t)
	if !ok || s.p.Env == nil {
		return nil
	}
	s.gitMu.Lock()
	defer s.gitMu.Unlock()
	res, err := s.runWorktree(ctx, "spawn", key)
	if err == nil && res.ExitCode != 0 {
		err = fmt.Errorf("git failed (exit %d): %s", res.ExitCode, strings.TrimSpace(res.Stderr))
	}
	if err != nil {
		return fmt.Errorf("giving it its worktree back: %w", err)
	}
	return nil
}

// dropWorktree removes the worktree of key when no child was made for it
// (the spawn failed before creating the task): untouched, it merges as
// nothing and goes. Failures are only logged.
func (s *Spawner) dropWorktree(ctx context.Context, key string) {
	s.gitMu.Lock()
	defer s.gitMu.Unlock()
	res, err := s.runWorktree(ctx, "merge", key)
	if err == nil && res.ExitCode != 0 {
		err = fmt.Errorf("git failed (exit %d): %s", res.ExitCode, strings.TrimSpace(res.Stderr))
	}
	if err != nil {
		s.p.Log.Warn("removing the worktree of a subagent that was not made", "key", key, "err", err)
	}
}

// mayWorktree says whether a child of this parent may get a worktree: a
// local environment (an SSH one shares: its files are on another host),
// the parent's environment known, a child that may write (permission
// mode plan is reads only, so it shares) and a working directory git may
// know (execenv.MayBeGitRepo; the script makes sure).
func (s *Spawner) mayWorktree(ctx context.Context) bool {
	p := s.p.Spec
	if s.p.Env == nil || p.Environment.Kind != fleet.EnvLocal || ReadOnly(p) {
		return false
	}
	return execenv.MayBeGitRepo(ctx, s.p.Env)
}

// ReadOnly says whether a child with spec (its permissions are its
// parent's) can only read: permission mode plan. Such children share
// their parent's tree.
func ReadOnly(spec fleet.TaskSpec) bool {
	return spec.Permissions != nil && spec.Permissions.Mode == permission.ModePlan
}

// runWorktree runs the script in the parent's environment.
func (s *Spawner) runWorktree(ctx context.Context, mode, key string) (execenv.ExecResult, error) {
	return runScript(ctx, s.p.Env, worktreeScript, map[string]string{"MODE": mode, "KEY": key})
}

// runScript runs one of the package's git scripts in env with vars; a
// timeout or a cancel is an error, an exit status is the caller's to
// read.
func runScript(ctx context.Context, env execenv.Environment, script string, vars map[string]string) (execenv.ExecResult, error) {
	res, err := env.Exec(ctx, execenv.ExecRequest{Command: script, Timeout: worktreeTimeout, Env: vars})
	switch {
	case err != nil:
		return res, err
	case res.TimedOut:
		return res, fmt.Errorf("git timed out after %s", worktreeTimeout)
	case res.Canceled:
		return res, fmt.Errorf("git: %w", context.Cause(ctx))
	}
	return res, nil
}

// childKey returns the worktree key of child t, when it works in a
// worktree of this parent (its working directory, or a subdirectory it
// asked for, is beneath WorktreesDir of the parent's).
func (s *Spawner) childKey(t store.Task) (string, bool) {
	spec, err := fleet.DecodeSpec(t.Spec)
	if err != nil || spec.Environment.Kind != fleet.EnvLocal {
		return "", false
	}
	rel, err := filepath.Rel(s.p.WorkingDir, spec.Environment.WorkingDir)
	if err != nil {
		return "", false
	}
	parts := strings.Split(filepath.ToSlash(rel), "/")
	if len(parts) < 2 || parts[0] != WorktreesDir {
		return "", false
	}
	if _, err := uuid.Parse(parts[1]); err != nil {
		return "", false
	}
	return parts[1], true
}

// mergeBack merges the work of ended child t, when it had a worktree or
// worked from the fleet git store (travel.go), into the parent's working
// directory and returns what the parent should be told ("" for
// nothing). See the package doc, "Worktrees".
func (s *Spawner) mergeBack(ctx context.Context, t store.Task) string {
	if s.p.Env != nil && s.f.Git != nil && traveled(t) {
		return s.mergeFromStore(ctx, t)
	}
	key, ok := s.childKey(t)
	if !ok || s.p.Env == nil {
		return ""
	}
	dir, branch := filepath.Join(s.p.WorkingDir, WorktreesDir, key), BranchOf(key)
	if t.State == store.TaskCancelled {
		return fmt.Sprintf("[this subagent was closed, so its work was not merged into your working tree; what it did is in %s]", dir)
	}
	s.gitMu.Lock()
	defer s.gitMu.Unlock()
	note, err := s.runMerge(ctx, key, dir)
	if err != nil {
		s.p.Log.Warn("merging a subagent's worktree", "agent_id", t.ID, "err", err)
		return fmt.Sprintf("[merging this subagent's work into your working tree failed: %v. Its work is in %s or on branch %s; merge it with git, or wait on it again to retry]", err, dir, branch)
	}
	return note
}

// runMerge runs worktree.sh's merge of key (the child's worktree dir, or
// only its branch) and returns the note for the parent. The caller holds
// gitMu.
func (s *Spawner) runMerge(ctx context.Context, key, dir string) (string, error) {
	branch := BranchOf(key)
	res, err := s.runWorktree(ctx, "merge", key)
	if err == nil && res.ExitCode != 0 {
		err = fmt.Errorf("git failed (exit %d): %s", res.ExitCode, strings.TrimSpace(res.Stderr))
	}
	if err != nil {
		return "", err
	}
	lines := strings.Split(strings.TrimSpace(res.Stdout), "\n")
	files := listed(lines[1:])
	switch lines[0] {
	case "merged":
		if files == "" {
			return "", nil
		}
		return "[its changes are merged into your working tree: " + files + "]", nil
	case "orphan":
		return fmt.Sprintf("[this subagent's directory %s is no longer a git worktree, so its work was not merged; its files are there]", dir), nil
	case "conflict":
		return fmt.Sprintf(conflictNote, files, branch, branch, branch, branch, branch), nil
	}
	return "", nil // none: merged by an earlier wait
}

// conflictNote is the note of a merge that conflicts: the files, then the
// branch five times.
const conflictNote = "[CONFLICT: this subagent's changes conflict with your working tree in: %s. Nothing of its work was applied; " +
	"it is kept on branch %s (see `git diff %s^ %s`). Take what you need (for example `git checkout %s -- FILE`, or edit by hand), " +
	"then delete the branch (`git branch -D %s`); while the branch exists, each wait on this subagent tries the merge again]"

// isConflict reports whether a merge note is a conflict's.
func isConflict(note string) bool { return strings.HasPrefix(note, "[CONFLICT:") }

// listed joins file names, at most maxListed of them.
func listed(names []string) string {
	var keep []string
	for _, n := range names {
		if n = strings.TrimSpace(n); n != "" {
			keep = append(keep, n)
		}
	}
	if len(keep) > maxListed {
		return strings.Join(keep[:maxListed], ", ") + fmt.Sprintf(" and %d more", len(keep)-maxListed)
	}
	return strings.Join(keep, ", ")
}
