package beneath

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ErrEscape marks a path that does not stay beneath its root: absolute,
// with a ".." component, or otherwise leaving it.
var ErrEscape = errors.New("path leaves its root")

// ErrSymlink marks a path with a symbolic link in one of its components.
var ErrSymlink = errors.New("path has a symbolic link in it")

// OpenDir opens the existing directory rel beneath root. rel is relative
// ("" and "." name root itself); see the package doc for what is refused.
// The caller closes the file.
func OpenDir(root, rel string) (*os.File, error) {
	return resolve(root, rel, false, 0)
}

// MkdirAll opens the directory rel beneath root, creating the missing
// components with perm (before umask) as it goes, and refusing what
// OpenDir refuses: a link planted where a component is expected is never
// followed, whether it was there before or appeared during the walk.
func MkdirAll(root, rel string, perm os.FileMode) (*os.File, error) {
	return resolve(root, rel, true, perm)
}

// resolve is OpenDir, or MkdirAll when create is set.
func resolve(root, rel string, create bool, perm os.FileMode) (*os.File, error) {
	parts, err := split(rel)
	if err != nil {
		return nil, err
	}
	if create {
		if err := os.MkdirAll(root, perm); err != nil {
			return nil, fmt.Errorf("beneath: creating root %s: %w", root, err)
		}
	}
	r, err := os.Open(root)
	if err != nil {
		return nil, fmt.Errorf("beneath: opening root %s: %w", root, err)
	}
	if len(parts) == 0 {
		return r, checkDir(r, root)
	}
	defer func() { _ = r.Close() }()
	f, err := openDir(r, strings.Join(parts, "/"), create, perm)
	if err != nil {
		return nil, describe(err, root, rel)
	}
	return f, nil
}

// Rel returns path relative to root when path, taken as text, is root or
// lies beneath it (both are cleaned first); otherwise an ErrEscape. It
// checks no file: pass its result to OpenDir or MkdirAll.
func Rel(root, path string) (string, error) {
	if !filepath.IsAbs(path) {
		return filepath.Clean(path), nil
	}
	rel, err := filepath.Rel(filepath.Clean(root), filepath.Clean(path))
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", fmt.Errorf("%w: %s is not under %s", ErrEscape, path, root)
	}
	return rel, nil
}

// split checks rel and returns its components, without "." ones.
func split(rel string) ([]string, error) {
	if filepath.IsAbs(rel) || strings.HasPrefix(rel, "/") {
		return nil, fmt.Errorf("%w: %q is absolute; name a directory relative to the workspace", ErrEscape, rel)
	}
	var parts []string
	for _, p := range strings.FieldsFunc(filepath.ToSlash(rel), func(r rune) bool { return r == '/' }) {
		switch p {
		case ".":
		case "..":
			return nil, fmt.Errorf("%w: %q has a \"..\" component; name a directory inside the workspace", ErrEscape, rel)
		default:
			parts = append(parts, p)
		}
	}
	return parts, nil
}

func checkDir(f *os.File, name string) error {
	fi, err := f.Stat()
	if err == nil && !fi.IsDir() {
		err = fmt.Errorf("beneath: %s is not a directory", name)
	}
	if err != nil {
		_ = f.Close()
	}
	return err
}

// describe names root and rel in an error of the resolution.
func describe(err error, root, rel string) error {
	switch {
	case errors.Is(err, ErrSymlink):
		return fmt.Errorf("%w: %q under %s; name the directory itself, not a link to it", ErrSymlink, rel, root)
	case errors.Is(err, ErrEscape):
		return fmt.Errorf("%w: %q under %s", ErrEscape, rel, root)
	}
	return fmt.Errorf("beneath: %q under %s: %w", rel, root, err)
}

// Lstat describes name, one component, in the directory dir (opened with
// OpenDir), without following it if it is a link.
func Lstat(dir *os.File, name string) (os.FileMode, error) {
	if name == "" || name == "." || name == ".." || strings.ContainsRune(name, '/') {
		return 0, fmt.Errorf("beneath: %q is not one name in a directory", name)
	}
	return lstat(dir, name)
}
