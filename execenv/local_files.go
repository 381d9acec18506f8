package execenv

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/agentfleet/agentfleet/execenv/internal/search"
)

// ReadFile returns the whole file.
func (l *Local) ReadFile(ctx context.Context, path string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p, err := l.workingDirFor(path)
	if err != nil {
		return nil, err
	}
	return os.ReadFile(p)
}

// OpenFile opens a file for streaming reads.
func (l *Local) OpenFile(ctx context.Context, path string) (ReadCloser, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p, err := l.workingDirFor(path)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	return f, nil
}

// WriteFile replaces a file's content, creating parent directories.
func (l *Local) WriteFile(ctx context.Context, path string, data []byte) error {
	if err := l.ready(ctx); err != nil {
		return err
	}
	p := l.resolve(path)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, data, 0o644)
}

// Stat describes a path (following symlinks).
func (l *Local) Stat(ctx context.Context, path string) (FileInfo, error) {
	if err := ctx.Err(); err != nil {
		return FileInfo{}, err
	}
	p, err := l.workingDirFor(path)
	if err != nil {
		return FileInfo{}, err
	}
	fi, err := os.Stat(p)
	if err != nil {
		return FileInfo{}, err
	}
	return FileInfo{Path: p, IsDir: fi.IsDir(), Size: fi.Size(), ModTime: fi.ModTime()}, nil
}

// Exists reports whether path exists.
func (l *Local) Exists(ctx context.Context, path string) (bool, error) {
	return existsVia(l.Stat(ctx, path))
}

// existsVia turns a Stat outcome into Exists' answer.
func existsVia(_ FileInfo, err error) (bool, error) {
	switch {
	case err == nil:
		return true, nil
	case isNotExist(err):
		return false, nil
	}
	return false, err
}

// List returns entries down to depth levels, sorted by relative name.
func (l *Local) List(ctx context.Context, dir string, depth int) ([]DirEntry, error) {
	if err := l.ready(ctx); err != nil {
		return nil, err
	}
	return listTree(ctx, search.OS{}, l.resolve(dir), depth)
}

// Remove deletes a file or an empty directory.
func (l *Local) Remove(ctx context.Context, path string) error {
	if err := l.ready(ctx); err != nil {
		return err
	}
	return os.Remove(l.resolve(path))
}

// Rename moves a file, creating the destination's parents.
func (l *Local) Rename(ctx context.Context, from, to string) error {
	if err := l.ready(ctx); err != nil {
		return err
	}
	dst := l.resolve(to)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	return os.Rename(l.resolve(from), dst)
}

// listTree lists dir through fsys down to depth levels (at least 1).
func listTree(ctx context.Context, fsys search.FS, dir string, depth int) ([]DirEntry, error) {
	if depth < 1 {
		depth = 1
	}
	var out []DirEntry
	var walk func(abs, rel string, level int) error
	walk = func(abs, rel string, level int) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		entries, err := fsys.ReadDir(abs)
		if err != nil {
			return err
		}
		for _, e := range entries {
			name := e.Name()
			if rel != "" {
				name = rel + "/" + name
			}
			de := DirEntry{Name: name, IsDir: e.IsDir()}
			if info, err := e.Info(); err == nil && !e.IsDir() {
				de.Size = info.Size()
			}
			out = append(out, de)
			if e.IsDir() && level < depth {
				if err := walk(fsys.Join(abs, e.Name()), name, level+1); err != nil && !isNotExist(err) {
					return err
				}
			}
		}
		return nil
	}
	if err := walk(dir, "", 1); err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// isNotExist is errors.Is(err, fs.ErrNotExist).
func isNotExist(err error) bool { return err != nil && errors.Is(err, fs.ErrNotExist) }
