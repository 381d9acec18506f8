package tasksandbox

import (
	"strings"

	"github.com/agentfleet/agentfleet/execenv/sandbox"
)

// Image is an environment image a task's commands run in: its unpacked
// root file system (read-only, shared by every task of that image) and
// its environment ("KEY=value": its PATH...).
type Image struct {
	Root string
	Env  []string
}

// WithImage returns s whose environments run their commands in img
// (execenv/sandbox's Settings.Image): the image's system in place of the
// worker's, under the same confinement. nil leaves s as it is.
func (s State) WithImage(img *Image) State {
	s.image = img
	return s
}

// imageRefusal refuses an image where commands would not be sandboxed:
// an image is a root file system for bubblewrap to bind, and without it a
// command would run on the worker's own system.
func (s State) imageRefusal() error {
	if s.image == nil || s.on {
		return nil
	}
	return &RefusedError{"environment.image needs the task sandbox (bubblewrap), and this worker runs local tasks unconfined (sandbox: off, or auto without bubblewrap)"}
}

// DefaultImagePath is the PATH of an image whose configuration sets none
// (the worker's own would name its directories, not the image's).
const DefaultImagePath = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// applyImage puts the image in set: its root, and its environment before
// the operator's sandbox_env (which wins), but for HOME and TMPDIR, which
// stay the sandbox's private ones.
func (s State) applyImage(set *sandbox.Settings) {
	if s.image == nil {
		return
	}
	set.Image = s.image.Root
	env := []string{DefaultImagePath}
	for _, kv := range s.image.Env {
		if k, _, _ := strings.Cut(kv, "="); k != "HOME" && k != "TMPDIR" {
			env = append(env, kv)
		}
	}
	set.Env = append(env, set.Env...)
}
