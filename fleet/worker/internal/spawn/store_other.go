//go:build !unix

package spawn

import (
	"errors"
	"runtime"
)

// errNoGitFiles: the fleet git store's bundle files are read and written
// beneath the workspace's .git with openat, which only Unix workers have.
var errNoGitFiles = errors.New("spawn: the fleet git store needs a Unix worker, not " + runtime.GOOS)

func (ws Workspace) readGitFile(string) ([]byte, error) { return nil, errNoGitFiles }

func (ws Workspace) writeGitFile(string, []byte) error { return errNoGitFiles }
