package execenv

import (
	"context"
	"os"
	"path/filepath"
)

// MayBeGitRepo reports whether env's working directory may lie inside a git
// repository, without starting a process. For a local environment it looks
// for a ".git" entry in the working directory and each of its parents and
// answers false only when there is none, so callers can skip running git
// (a process start costs more than a whole trivial session). A working
// directory that does not exist (a CreateOnFirstUse one nothing has
// touched) answers false at once, without creating it: git could not run
// in it. Any other environment, or an error while looking, answers true:
// only git itself knows, and one Exec over SSH is cheaper than a walk of
// round trips.
//
// Like git's own discovery, the walk honours ".git" files (worktrees,
// submodules). It does not see GIT_DIR set in the environment of the
// commands; a host relying on GIT_DIR runs git itself.
func MayBeGitRepo(_ context.Context, env Environment) bool {
	if env.Describe().Kind != KindLocal {
		return true
	}
	dir := filepath.Clean(env.WorkingDir())
	// A local working directory is a path on this machine. Asking env
	// would create a CreateOnFirstUse directory.
	if _, err := os.Stat(dir); isNotExist(err) {
		return false
	}
	for {
		// Looked up on this machine, not through env: a sandboxed
		// environment refuses paths outside its workspace, which would
		// answer true for every parent and start git under the sandbox.
		if _, err := os.Stat(filepath.Join(dir, ".git")); !isNotExist(err) {
			return true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return false
		}
		dir = parent
	}
}
