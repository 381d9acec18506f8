package delivery

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentfleet/agentfleet/fleet/internal/repomemory"
)

// stage is the worker's own git directory for one delivery. The agent
// could write anything into the workspace's .git (hooks, a config whose
// core.fsmonitor, filters or sshCommand run programs), and a delivery runs
// git on the worker, outside any sandbox, with the worker's credentials. So
// no git command here runs with the workspace's .git as its repository:
// the stage reads the workspace's objects through an alternates file, its
// refs as plain data, and its files through GIT_WORK_TREE with an index
// of its own; it commits, fetches and pushes from its own fresh config,
// without hooks.
type stage struct {
	dir  string // the stage's bare git directory
	work string // the workspace
}

// newStage makes the stage of a workspace.
func newStage(ctx context.Context, work string) (*stage, error) {
	objects := filepath.Join(work, ".git", "objects")
	if fi, err := os.Stat(objects); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("the workspace %s is not a git clone (no .git/objects)", work)
	}
	dir, err := os.MkdirTemp("", "agentfleet-delivery-")
	if err != nil {
		return nil, err
	}
	st := &stage{dir: dir, work: work}
	if _, err := gitRun(ctx, "", nil, "", "init", "--quiet", "--bare", dir); err != nil {
		st.remove()
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "objects", "info", "alternates"), []byte(objects+"\n"), 0o644); err != nil {
		st.remove()
		return nil, err
	}
	return st, nil
}

func (s *stage) remove() { _ = os.RemoveAll(s.dir) }

// git runs git on the stage's repository.
func (s *stage) git(ctx context.Context, env []string, stdin string, args ...string) (string, error) {
	return gitRun(ctx, "", append(env, "GIT_DIR="+s.dir), stdin, args...)
}

// workspaceRefs reads the workspace's HEAD commit and the commits of its
// remote-tracking refs (what its remotes had), leaving out those of the
// delivery's own branch, as data: the workspace's config is not applied.
func (s *stage) workspaceRefs(ctx context.Context, branch string) (head string, bases []string, err error) {
	wsGit := []string{"GIT_DIR=" + filepath.Join(s.work, ".git"), "GIT_CONFIG_NOSYSTEM=1"}
	head, err = gitRun(ctx, "", wsGit, "", "rev-parse", "--verify", "--end-of-options", "HEAD^{commit}")
	if err != nil {
		return "", nil, fmt.Errorf("the workspace has no commit: %w", err)
	}
	out, err := gitRun(ctx, "", wsGit, "", "for-each-ref", "--format=%(objectname) %(refname)", "refs/remotes/")
	if err != nil {
		return "", nil, err
	}
	for line := range strings.SplitSeq(out, "\n") {
		id, ref, ok := strings.Cut(line, " ")
		if !ok || branch != "" && strings.HasSuffix(ref, "/"+branch) {
			continue
		}
		bases = append(bases, id)
	}
	return head, bases, nil
}

// snapshot records the workspace's files (as `git add --all` would, with
// its .gitignore files) on top of head's tree and returns the tree. The
// agent's own notes (repomemory.Files) are left out by pathspec, whatever
// the workspace's exclude files say: the tree holds them as head did.
func (s *stage) snapshot(ctx context.Context, head string) (string, error) {
	env := []string{"GIT_INDEX_FILE=" + filepath.Join(s.dir, "index"), "GIT_WORK_TREE=" + s.work}
	if _, err := s.git(ctx, env, "", "read-tree", head); err != nil {
		return "", err
	}
	if _, err := gitRun(ctx, s.work, append(env, "GIT_DIR="+s.dir), "", append([]string{"add", "--all", "--", "."}, agentFiles()...)...); err != nil {
		return "", err
	}
	return s.git(ctx, env, "", "write-tree")
}

// agentFiles are pathspecs that leave out what the agent keeps for itself
// (repomemory.Files) in any directory: a subagent's session, or a session
// whose working directory is a subdirectory, keeps its notes there. So
// are subagents' worktrees (worktreesDir): work a parent did not merge.
func agentFiles() []string {
	specs := make([]string, 0, len(repomemory.Files)+1)
	for _, f := range repomemory.Files {
		specs = append(specs, ":(top,glob,exclude)**/"+f)
	}
	return append(specs, ":(top,glob,exclude)**/"+worktreesDir+"/**")
}

// worktreesDir is where a session's subagents get their git worktrees
// (fleet/worker/internal/spawn.WorktreesDir, which is internal to the
// worker): the repository's info/exclude lists it, but a stage does not
// read the workspace's exclude files.
const worktreesDir = ".agentfleet-worktrees"
