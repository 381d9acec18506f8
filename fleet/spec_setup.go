package fleet

import (
	"path"
	"strings"
)

// MaxSetupBytes bounds environment.setup.
const MaxSetupBytes = 16 << 10

// environment.setup prepares a local task's repository once, before its
// agent starts: installing dependencies, building, warming a module
// cache. The worker runs it in the task's own sandbox (its image, its
// network) once per (repository, base commit, image, setup text), keeps
// the workspace as it left it as a snapshot, and starts later tasks on
// the same key from that snapshot instead of running it again
// (fleet/worker, setup.go). A failing setup fails the task (reason
// environment) with the end of its output.
//
// Setup is either a shell command ("go mod download && go build ./...")
// or a file of the repository ("./.agentfleet/setup.sh"): one word,
// relative, with a "/" in it, no ".." component. The worker resolves a
// file beneath the workspace, refusing a link on the way, and runs it with
// sh. A single word without "/" ("make") is a command.

// SetupFile returns the repository file environment.setup names, or ""
// when it is a command.
func (e Environment) SetupFile() string {
	s := strings.TrimSpace(e.Setup)
	if s == "" || strings.ContainsAny(s, " \t\n;&|<>$`'\"()") || !strings.Contains(s, "/") || strings.HasPrefix(s, "/") {
		return ""
	}
	return path.Clean(s)
}

// checkSetup checks environment.setup on its own.
func (e Environment) checkSetup() *FieldError {
	s := strings.TrimSpace(e.Setup)
	switch {
	case e.Setup == "":
		return nil
	case s == "":
		return fieldErr("environment.setup", "is blank; leave it out or give a command such as \"go mod download\"")
	case e.Kind != EnvLocal && e.Kind != "":
		return fieldErr("environment.setup", "needs a local environment; prepare an ssh host yourself")
	case e.Repo == "":
		return fieldErr("environment.setup", "needs environment.repo: setup prepares a repository, and its snapshot is kept per repository and commit")
	case e.WorkingDir != "":
		return fieldErr("environment.setup", "cannot be combined with environment.working_dir: setup prepares a fresh clone of environment.repo")
	case len(e.Setup) > MaxSetupBytes:
		return fieldErr("environment.setup", "is longer than %d bytes; put a long setup in a file of the repository (./.agentfleet/setup.sh)", MaxSetupBytes)
	case strings.ContainsRune(e.Setup, 0):
		return fieldErr("environment.setup", "contains a NUL byte")
	}
	if f := e.SetupFile(); f != "" && (f == ".." || strings.HasPrefix(f, "../") || strings.Contains(f, "/../")) {
		return fieldErr("environment.setup", "file %q leaves the repository; name a file inside it such as ./.agentfleet/setup.sh", e.Setup)
	}
	return nil
}
