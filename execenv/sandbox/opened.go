package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// OpenedDir is a directory the caller opened, beneath a root it trusts and
// without following links (internal/beneath), that the commands may read
// at path At (Settings.ReadOnlyDirs). It is bound as opened: bwrap's
// --ro-bind-fd, or a root worker's portal whose source is the descriptor,
// so what the commands see is the directory that was opened, whatever
// became of its name since (a link swapped in is never followed). The
// caller keeps File open while the environment lives.
//
// The use it was made for: a subagent working in a git worktree of its
// parent's repository needs the parent's .git to run git, and that
// directory lies in a workspace a task writes (see
// fleet/worker/internal/spawn, "Worktrees").
type OpenedDir struct {
	File *os.File
	At   string // absolute: where the commands see it
}

// BoundFD is a read-only bind of a descriptor bwrap holds (Policy.ReadOnlyFDs).
type BoundFD struct {
	FD int    // as bwrap holds it: 3 for the first of exec.Cmd.ExtraFiles
	At string // absolute
}

// checkOpened validates Settings.ReadOnlyDirs.
func checkOpened(dirs []OpenedDir) error {
	for _, d := range dirs {
		switch {
		case d.File == nil:
			return errors.New("sandbox: a read-only directory was not opened")
		case !filepath.IsAbs(d.At):
			return fmt.Errorf("sandbox: read-only directory %q must be absolute", d.At)
		}
	}
	return nil
}

// openedArgs are the bwrap arguments of p.ReadOnlyFDs.
func openedArgs(fds []BoundFD) []string {
	var args []string
	for _, b := range fds {
		args = append(args, "--ro-bind-fd", fmt.Sprint(b.FD), b.At)
	}
	return args
}

// addOpenedPortals gives each opened directory a portal whose source is
// its descriptor, so that the portal holds what was opened.
func (l *Local) addOpenedPortals(dirs []OpenedDir) error {
	for _, d := range dirs {
		src, err := l.portals.add(fdPath(d.File), true)
		if err != nil {
			return err
		}
		l.sources[d.At] = src
	}
	return nil
}

// bindOpened adds the opened directories to p, and their descriptors to
// files where there are no portals.
func (l *Local) bindOpened(p *Policy, files []*os.File) []*os.File {
	dirs := l.portalSettings.ReadOnlyDirs
	if len(dirs) == 0 {
		return files
	}
	if l.portals != nil { // bound through their portals, by Sources
		ro := append([]string{}, p.ReadOnly...)
		for _, d := range dirs {
			ro = append(ro, d.At)
		}
		p.ReadOnly = ro
		return files
	}
	for _, d := range dirs {
		files = append(files, d.File)
		p.ReadOnlyFDs = append(p.ReadOnlyFDs, BoundFD{FD: 2 + len(files), At: d.At})
	}
	return files
}
