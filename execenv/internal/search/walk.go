package search

import (
	"context"
	"io/fs"
	"path"
	"slices"

	"golang.org/x/sync/errgroup"

	"github.com/agentfleet/agentfleet/execenv/internal/pathmatch"
)

// walker visits the files of a tree the way ripgrep does with our flags:
// hidden files included, entries named .git skipped, .gitignore files of
// the root's ancestors and of every directory honoured, symlinks and other
// non-regular files skipped, and (for grep) --glob overrides applied.
type walker struct {
	fsys      FS
	root      string                 // absolute directory where the walk starts
	overrides *pathmatch.OverrideSet // nil: none
}

// visitFunc receives each regular file: its absolute path and its entry.
type visitFunc func(abs string, d fs.DirEntry) error

// walkParallelism is how many directories are read at once: it hides the
// round trip of each SFTP directory listing and overlaps local disk reads.
const walkParallelism = 8

// walk calls visit for every file that is not ignored, from several
// goroutines at once (visit must be safe for concurrent use). Unreadable
// directories are skipped, as ripgrep skips them.
func (w *walker) walk(ctx context.Context, visit visitFunc) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(walkParallelism)
	stack := w.ancestorIgnores()
	g.Go(func() error { return w.walkDir(gctx, g, w.root, stack, visit) })
	return g.Wait()
}

// ancestorIgnores loads the .gitignore files of the root's parents, outermost first.
func (w *walker) ancestorIgnores() pathmatch.IgnoreStack {
	var dirs []string
	for dir := path.Dir(w.root); ; dir = path.Dir(dir) {
		dirs = append(dirs, dir)
		if dir == "/" || dir == "." {
			break
		}
	}
	var stack pathmatch.IgnoreStack
	for _, dir := range slices.Backward(dirs) {
		stack = stack.Push(w.loadIgnore(dir))
	}
	return stack
}

// loadIgnore parses dir/.gitignore, or returns nil.
func (w *walker) loadIgnore(dir string) *pathmatch.IgnoreFile {
	data, err := readAllLimited(w.fsys, w.fsys.Join(dir, ".gitignore"), pathmatch.MaxIgnoreFileSize)
	if err != nil {
		return nil
	}
	return pathmatch.ParseIgnoreFile(dir, data)
}

// walkDir visits one directory. Subdirectories go to new goroutines of g
// while it has room, and are walked inline otherwise.
func (w *walker) walkDir(ctx context.Context, g *errgroup.Group, dir string, stack pathmatch.IgnoreStack, visit visitFunc) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	entries, err := w.fsys.ReadDir(dir)
	if err != nil {
		return nil //nolint:nilerr // an unreadable directory is skipped, as rg does
	}
	for _, e := range entries {
		if e.Name() == ".gitignore" && e.Type().IsRegular() {
			stack = stack.Push(w.loadIgnore(dir))
			break
		}
	}
	for _, e := range entries {
		abs := w.fsys.Join(dir, e.Name())
		if !w.keep(abs, e, stack) {
			continue
		}
		if !e.IsDir() {
			if err := visit(abs, e); err != nil {
				return err
			}
			continue
		}
		if !g.TryGo(func() error { return w.walkDir(ctx, g, abs, stack, visit) }) {
			if err := w.walkDir(ctx, g, abs, stack, visit); err != nil {
				return err
			}
		}
	}
	return nil
}

// keep applies type, .git, override and .gitignore rules to one entry.
func (w *walker) keep(abs string, e fs.DirEntry, stack pathmatch.IgnoreStack) bool {
	if e.Name() == ".git" {
		return false
	}
	isDir := e.IsDir()
	if !isDir && !e.Type().IsRegular() {
		return false
	}
	if w.overrides != nil {
		if decided, ign := w.overrides.Decide(abs, isDir); decided {
			return !ign
		}
	}
	return !stack.Ignored(abs, isDir)
}
