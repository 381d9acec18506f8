package execenv

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"
	"sync"

	"github.com/pkg/sftp"
)

// RealPathResolver is implemented by environments that can resolve
// symlinks (Local and SSH do). Scoped uses it; without it, Scoped checks
// paths lexically only.
type RealPathResolver interface {
	// RealPath returns the absolute path with every symlink resolved,
	// dangling ones included; the part of the path that does not exist is
	// appended as it is (cleaned).
	RealPath(ctx context.Context, path string) (string, error)
	// RealPathBeneath is RealPath of dir/rel for a dir that is already a
	// real path (one RealPath returned): only rel's components are looked
	// at, though a link among them may still lead anywhere.
	RealPathBeneath(ctx context.Context, dir, rel string) (string, error)
}

// Scoped wraps env so that every path (file operations, the command
// directory, the grep and glob roots) must lie inside one of roots after
// resolving "..", and symlinks when env implements RealPathResolver. Other
// paths fail with ErrOutsideScope naming the path. No roots means the
// working directory. Links through /proc (/proc/self/root, /proc/self/fd)
// are read like any other link, so they resolve where they point.
// Commands themselves are not confined: a command can still `cat
// /etc/passwd` (execenv/sandbox confines them, and adds checks of what a
// file operation really opened, against links swapped in after the check
// and hard links).
func Scoped(env Environment, roots ...string) Environment {
	return &scoped{Environment: env, roots: roots}
}

type scoped struct {
	Environment
	roots []string

	once     sync.Once
	resolved []string // roots after resolution, set by once
	rootsErr error
}

// check resolves p and returns an error unless it is inside a root.
func (s *scoped) check(ctx context.Context, p string) error {
	s.once.Do(func() { s.resolved, s.rootsErr = s.resolveRoots(ctx) })
	if s.rootsErr != nil {
		return s.rootsErr
	}
	abs := s.abs(p)
	real, err := s.realPathInScope(ctx, abs)
	if err != nil {
		return err
	}
	for _, r := range s.resolved {
		if real == r || strings.HasPrefix(real, strings.TrimSuffix(r, "/")+"/") {
			return nil
		}
	}
	if real != abs {
		return fmt.Errorf("%w: %q resolves to %q, which is not under %s", ErrOutsideScope, p, real, strings.Join(s.resolved, ", "))
	}
	return fmt.Errorf("%w: %q is not under %s", ErrOutsideScope, p, strings.Join(s.resolved, ", "))
}

// resolveRoots makes the roots absolute and resolves their symlinks.
func (s *scoped) resolveRoots(ctx context.Context) ([]string, error) {
	roots := s.roots
	if len(roots) == 0 {
		roots = []string{s.Environment.WorkingDir()}
	}
	out := make([]string, 0, len(roots))
	for _, r := range roots {
		real, err := s.realPath(ctx, s.abs(r))
		if err != nil {
			return nil, fmt.Errorf("execenv: scoped root %q: %w", r, err)
		}
		out = append(out, real)
	}
	return out, nil
}

// abs makes p absolute against the working directory and cleans "..".
func (s *scoped) abs(p string) string {
	if !path.IsAbs(p) {
		p = path.Join(s.Environment.WorkingDir(), p)
	}
	return path.Clean(p)
}

// realPath resolves abs through the environment when it can.
func (s *scoped) realPath(ctx context.Context, abs string) (string, error) {
	if rp, ok := s.Environment.(RealPathResolver); ok {
		return rp.RealPath(ctx, abs)
	}
	return abs, nil
}

// realPathInScope is realPath, resolving a path written beneath a resolved
// root from that root: its components were resolved once, when the roots
// were, and a task cannot replace them (they lie outside its scope). A
// task's files are a component or two below a root several deep, so this
// spares most of each check's lookups.
func (s *scoped) realPathInScope(ctx context.Context, abs string) (string, error) {
	rp, ok := s.Environment.(RealPathResolver)
	if !ok {
		return abs, nil
	}
	for _, r := range s.resolved {
		if abs == r {
			return r, nil
		}
		if rel, ok := strings.CutPrefix(abs, strings.TrimSuffix(r, "/")+"/"); ok {
			return rp.RealPathBeneath(ctx, r, rel)
		}
	}
	return rp.RealPath(ctx, abs)
}

func (s *scoped) ReadFile(ctx context.Context, p string) ([]byte, error) {
	if err := s.check(ctx, p); err != nil {
		return nil, err
	}
	return s.Environment.ReadFile(ctx, p)
}

func (s *scoped) OpenFile(ctx context.Context, p string) (ReadCloser, error) {
	if err := s.check(ctx, p); err != nil {
		return nil, err
	}
	return s.Environment.OpenFile(ctx, p)
}

func (s *scoped) WriteFile(ctx context.Context, p string, data []byte) error {
	if err := s.check(ctx, p); err != nil {
		return err
	}
	return s.Environment.WriteFile(ctx, p, data)
}

func (s *scoped) Stat(ctx context.Context, p string) (FileInfo, error) {
	if err := s.check(ctx, p); err != nil {
		return FileInfo{}, err
	}
	return s.Environment.Stat(ctx, p)
}

func (s *scoped) Exists(ctx context.Context, p string) (bool, error) {
	if err := s.check(ctx, p); err != nil {
		return false, err
	}
	return s.Environment.Exists(ctx, p)
}

func (s *scoped) List(ctx context.Context, dir string, depth int) ([]DirEntry, error) {
	if err := s.check(ctx, dir); err != nil {
		return nil, err
	}
	return s.Environment.List(ctx, dir, depth)
}

func (s *scoped) Remove(ctx context.Context, p string) error {
	if err := s.check(ctx, p); err != nil {
		return err
	}
	return s.Environment.Remove(ctx, p)
}

func (s *scoped) Rename(ctx context.Context, from, to string) error {
	if err := s.check(ctx, from); err != nil {
		return err
	}
	if err := s.check(ctx, to); err != nil {
		return err
	}
	return s.Environment.Rename(ctx, from, to)
}

func (s *scoped) Exec(ctx context.Context, req ExecRequest) (ExecResult, error) {
	if err := s.check(ctx, req.Dir); err != nil {
		return ExecResult{}, err
	}
	return s.Environment.Exec(ctx, req)
}

func (s *scoped) Grep(ctx context.Context, req GrepRequest) (GrepResult, error) {
	if err := s.check(ctx, req.Path); err != nil {
		return GrepResult{}, err
	}
	return s.Environment.Grep(ctx, req)
}

func (s *scoped) Glob(ctx context.Context, req GlobRequest) (GlobResult, error) {
	if err := s.check(ctx, req.Path); err != nil {
		return GlobResult{}, err
	}
	return s.Environment.Glob(ctx, req)
}

// RealPath resolves symlinks of a local path (see RealPathResolver).
func (l *Local) RealPath(ctx context.Context, p string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	return resolveLinks(osLinkFS{}, "/", l.resolve(p))
}

// RealPathBeneath resolves rel beneath a real local dir (see RealPathResolver).
func (l *Local) RealPathBeneath(ctx context.Context, dir, rel string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	return resolveLinks(osLinkFS{}, dir, rel)
}

// RealPath resolves symlinks of a remote path (see RealPathResolver).
func (s *SSH) RealPath(ctx context.Context, p string) (string, error) {
	return s.realPathFrom(ctx, "/", s.resolve(p))
}

// RealPathBeneath resolves rel beneath a real remote dir (see RealPathResolver).
func (s *SSH) RealPathBeneath(ctx context.Context, dir, rel string) (string, error) {
	return s.realPathFrom(ctx, dir, rel)
}

func (s *SSH) realPathFrom(ctx context.Context, dir, rel string) (string, error) {
	var real string
	err := s.files(ctx, func(c *sshConn) error {
		var err error
		real, err = resolveLinks(sftpLinkFS{c.sftp}, dir, rel)
		return err
	})
	return real, err
}

// maxLinks bounds symlink hops, as the kernel's ELOOP limit does.
const maxLinks = 40

// linkFS is what resolveLinks needs.
type linkFS interface {
	lstat(p string) (fs.FileInfo, error)
	readlink(p string) (string, error)
}

// resolveLinks walks p from dir, a real absolute path, one component at a
// time, following symlinks (dangling ones too); once a component does not
// exist the rest is appended lexically. An absolute p is walked from "/"
// whatever dir is.
func resolveLinks(fsys linkFS, dir, p string) (string, error) {
	resolved := dir
	if path.IsAbs(p) {
		resolved = "/"
	}
	whole := path.Join(resolved, p) // for an error
	rest := strings.Split(p, "/")
	for hops := 0; len(rest) > 0; {
		name := rest[0]
		rest = rest[1:]
		switch name {
		case "", ".":
			continue
		case "..":
			resolved = path.Dir(resolved)
			continue
		}
		next := path.Join(resolved, name)
		fi, err := fsys.lstat(next)
		if isNotExist(err) {
			return path.Join(append([]string{next}, rest...)...), nil
		}
		if err != nil {
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			resolved = next
			continue
		}
		if hops++; hops > maxLinks {
			return "", fmt.Errorf("execenv: too many levels of symbolic links resolving %q", whole)
		}
		target, err := fsys.readlink(next)
		if err != nil {
			return "", err
		}
		if path.IsAbs(target) {
			resolved = "/"
		}
		rest = append(strings.Split(target, "/"), rest...)
	}
	return resolved, nil
}

// osLinkFS is the local disk.
type osLinkFS struct{}

func (osLinkFS) lstat(p string) (fs.FileInfo, error) { return os.Lstat(p) }
func (osLinkFS) readlink(p string) (string, error)   { return os.Readlink(p) }

// sftpLinkFS is a remote disk.
type sftpLinkFS struct{ c *sftp.Client }

func (f sftpLinkFS) lstat(p string) (fs.FileInfo, error) {
	fi, err := f.c.Lstat(p)
	if err != nil {
		return nil, &fs.PathError{Op: "lstat", Path: p, Err: err}
	}
	return fi, nil
}
func (f sftpLinkFS) readlink(p string) (string, error) { return f.c.ReadLink(p) }
