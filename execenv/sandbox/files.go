package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentfleet/agentfleet/execenv"
)

// The file operations of Local run in the worker, outside the sandbox,
// while the task's commands may change the workspace under them. Wrapped
// in execenv.Scoped (see Scope), a path is checked after resolving "..",
// symbolic links and /proc's links; Local then closes what a check of a
// path cannot: a link swapped in between the check and the use, and hard
// links. Reads verify the descriptor they opened (its /proc/self/fd link
// names where it really is) and refuse a file with more than one link;
// writes, removals and renames go through an os.Root of the workspace,
// which never leaves it, and refuse to write through a hard link.

// Scope wraps l so that its file operations, the directories of its
// commands and its searches stay inside the workspace (read and write)
// and the Settings' ReadOnly paths (read only). The result also starts
// long-lived processes (execenv.ProcessStarter, for MCP servers), under
// bubblewrap like l's commands.
func Scope(l *Local) execenv.Environment {
	return &scoped{Environment: execenv.Scoped(l, append([]string{l.WorkingDir()}, l.readOnly...)...), l: l}
}

// scoped is Scope's environment: execenv.Scoped, plus StartProcess.
type scoped struct {
	execenv.Environment
	l *Local
}

var _ execenv.ProcessStarter = (*scoped)(nil)

// StartProcess starts a process of l (sandboxed) whose directory is
// inside the scope.
func (s *scoped) StartProcess(ctx context.Context, req execenv.ProcessRequest) (execenv.Process, error) {
	if _, err := s.Environment.Stat(ctx, req.Dir); err != nil {
		return nil, err
	}
	return s.l.StartProcess(ctx, req)
}

// errHardLink refuses a file another name also reaches.
func errHardLink(path string, n uint64) error {
	return fmt.Errorf("%w: %q has %d hard links, and file tools do not use a file that may also be reached from outside the allowed directories; copy it with the shell instead",
		execenv.ErrOutsideScope, path, n)
}

// ReadFile reads a file of the workspace or a read-only path (see above).
func (l *Local) ReadFile(ctx context.Context, path string) ([]byte, error) {
	f, err := l.openChecked(ctx, path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	return io.ReadAll(f)
}

// OpenFile opens a file of the workspace or a read-only path (see above).
func (l *Local) OpenFile(ctx context.Context, path string) (execenv.ReadCloser, error) {
	f, err := l.openChecked(ctx, path)
	if err != nil {
		return nil, err
	}
	return f, nil
}

// openChecked opens path and checks what it opened.
func (l *Local) openChecked(ctx context.Context, path string) (*os.File, error) {
	rc, err := l.Local.OpenFile(ctx, path)
	if err != nil {
		return nil, err
	}
	f, ok := rc.(*os.File)
	if !ok {
		_ = rc.Close()
		return nil, errors.New("sandbox: the local environment opened something that is not a file")
	}
	if err := l.checkOpened(f, path); err != nil {
		_ = f.Close()
		return nil, err
	}
	return f, nil
}

// checkOpened refuses an open file with several links or whose real
// location is outside the workspace and the read-only paths.
func (l *Local) checkOpened(f *os.File, path string) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if n := links(fi); !fi.IsDir() && n > 1 {
		return errHardLink(path, n)
	}
	real, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", f.Fd()))
	if err != nil {
		return nil //nolint:nilerr // no /proc: the path check of Scope stands alone
	}
	for _, root := range append([]string{l.WorkingDir()}, l.readOnly...) {
		if under(real, realPath(root)) {
			return nil
		}
	}
	return fmt.Errorf("%w: %q is really %q", execenv.ErrOutsideScope, path, real)
}

// WriteFile writes a file of the workspace through an os.Root of it.
func (l *Local) WriteFile(ctx context.Context, path string, data []byte) error {
	return l.inWorkspace(ctx, path, func(root *os.Root, rel string) error {
		if err := l.mkdirAll(root, filepath.Dir(rel)); err != nil {
			return err
		}
		f, err := root.OpenFile(rel, os.O_WRONLY|os.O_CREATE, 0o644)
		if err != nil {
			return err
		}
		defer func() { _ = f.Close() }()
		if err := l.giveFile(f); err != nil {
			return err
		}
		if fi, err := f.Stat(); err != nil {
			return err
		} else if n := links(fi); n > 1 {
			return errHardLink(path, n)
		}
		if err := f.Truncate(0); err != nil {
			return err
		}
		if _, err := f.Write(data); err != nil {
			return err
		}
		return f.Close()
	})
}

// Remove deletes a file or an empty directory of the workspace.
func (l *Local) Remove(ctx context.Context, path string) error {
	return l.inWorkspace(ctx, path, func(root *os.Root, rel string) error { return root.Remove(rel) })
}

// Rename moves a file inside the workspace, creating the destination's
// parents.
func (l *Local) Rename(ctx context.Context, from, to string) error {
	return l.inWorkspace(ctx, from, func(root *os.Root, relFrom string) error {
		relTo, err := l.relative(to)
		if err != nil {
			return err
		}
		if err := l.mkdirAll(root, filepath.Dir(relTo)); err != nil {
			return err
		}
		return root.Rename(relFrom, relTo)
	})
}

// inWorkspace runs op with an os.Root of the workspace and path relative
// to it; a path outside the workspace is refused.
func (l *Local) inWorkspace(ctx context.Context, path string, op func(root *os.Root, rel string) error) error {
	rel, err := l.relative(path)
	if err != nil {
		return err
	}
	if _, err := l.Local.Stat(ctx, "."); err != nil { // creates a workspace made on first use
		return err
	}
	ws, err := l.workspace()
	if err != nil {
		return err
	}
	root, err := os.OpenRoot(fdPath(ws))
	if err != nil {
		return err
	}
	defer func() { _ = root.Close() }()
	return op(root, rel)
}

// mkdirAll makes dir (relative to root) and its missing parents, giving
// each to the commands' uid when it is not the worker's (to its group
// with subordinate uids: see give).
func (l *Local) mkdirAll(root *os.Root, dir string) error {
	if err := root.MkdirAll(dir, 0o755); err != nil || l.uid < 0 && l.sub == nil {
		return err
	}
	for d := dir; d != "." && d != "/" && d != ""; d = filepath.Dir(d) {
		if err := l.giveIn(root, d); err != nil {
			return err
		}
	}
	return nil
}

// relative is path relative to the workspace, refused when it is not
// inside (lexically; os.Root refuses links that leave it).
func (l *Local) relative(path string) (string, error) {
	abs := path
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(l.WorkingDir(), abs)
	}
	rel, err := filepath.Rel(l.WorkingDir(), filepath.Clean(abs))
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return "", fmt.Errorf("%w: %q is not in the workspace %s (the only place file tools write)", execenv.ErrOutsideScope, path, l.WorkingDir())
	}
	return rel, nil
}

// realPath is p with its symbolic links resolved, or p.
func realPath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}

// under reports whether p is root or inside it.
func under(p, root string) bool {
	return p == root || strings.HasPrefix(p, strings.TrimSuffix(root, "/")+"/")
}

// giveIn is give for a directory d of root: with subordinate uids, mode
// 0775 and the task's uid when the worker owns it.
func (l *Local) giveIn(root *os.Root, d string) error {
	if l.sub == nil {
		return root.Lchown(d, l.uid, l.uid)
	}
	f, err := root.Open(d) // inside the workspace whatever it is now
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	if fi, err := f.Stat(); err != nil || !ownedByWorker(fi) {
		return err
	}
	if err := f.Chmod(0o775); err != nil {
		return err
	}
	return l.handOverFile(f)
}
