package patch

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/agentfleet/agentfleet/execenv"
)

// FS is the file access Apply needs; every execenv.Environment provides it.
type FS interface {
	ReadFile(ctx context.Context, path string) ([]byte, error)
	WriteFile(ctx context.Context, path string, data []byte) error
	Stat(ctx context.Context, path string) (execenv.FileInfo, error)
	Remove(ctx context.Context, path string) error
}

// Change is one operation Apply performed.
type Change struct {
	Op     Op
	Path   string
	MoveTo string
}

// String renders the change as one summary line: "A path", "D path",
// "M path" or "M old -> new".
func (c Change) String() string {
	switch c.Op {
	case OpAdd:
		return "A " + c.Path
	case OpDelete:
		return "D " + c.Path
	}
	if c.MoveTo != "" && c.MoveTo != c.Path {
		return "M " + c.Path + " -> " + c.MoveTo
	}
	return "M " + c.Path
}

// ApplyError reports the operation that failed and those applied before it,
// which stay applied.
type ApplyError struct {
	Applied []Change
	Path    string
	Err     error
}

func (e *ApplyError) Error() string {
	return fmt.Sprintf("%s: %v", e.Path, e.Err)
}

func (e *ApplyError) Unwrap() error { return e.Err }

// ErrEmpty is returned for a patch with no file operations.
var ErrEmpty = errors.New("the patch contains no file operations, so nothing was changed")

// Apply performs the operations of p in order through fsys and returns what
// it changed. It stops at the first failure without undoing earlier
// operations; the *ApplyError lists them.
func Apply(ctx context.Context, fsys FS, p *Patch) ([]Change, error) {
	if len(p.Files) == 0 {
		return nil, ErrEmpty
	}
	var done []Change
	for _, op := range p.Files {
		if err := applyOne(ctx, fsys, op); err != nil {
			return done, &ApplyError{Applied: done, Path: op.Path, Err: err}
		}
		done = append(done, Change{Op: op.Op, Path: op.Path, MoveTo: op.MoveTo})
	}
	return done, nil
}

func applyOne(ctx context.Context, fsys FS, op FileOp) error {
	switch op.Op {
	case OpAdd:
		return fsys.WriteFile(ctx, op.Path, []byte(op.Contents))
	case OpDelete:
		return deleteFile(ctx, fsys, op.Path)
	case OpUpdate:
		return updateFile(ctx, fsys, op)
	}
	return fmt.Errorf("unknown operation %q", op.Op)
}

func deleteFile(ctx context.Context, fsys FS, path string) error {
	info, err := fsys.Stat(ctx, path)
	if errors.Is(err, fs.ErrNotExist) {
		return errors.New("cannot delete: the file does not exist")
	}
	if err != nil {
		return err
	}
	if info.IsDir {
		return errors.New("cannot delete: it is a directory, and Delete File removes files only")
	}
	return fsys.Remove(ctx, path)
}

func updateFile(ctx context.Context, fsys FS, op FileOp) error {
	data, err := fsys.ReadFile(ctx, op.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return errors.New("cannot update: the file does not exist (use *** Add File to create a file)")
	}
	if err != nil {
		return fmt.Errorf("cannot read the file to update: %w", err)
	}
	updated, err := Update(string(data), op.Chunks)
	if err != nil {
		return err
	}
	dest := op.Path
	if op.MoveTo != "" {
		dest = op.MoveTo
	}
	if err := fsys.WriteFile(ctx, dest, []byte(updated)); err != nil {
		return err
	}
	if dest != op.Path {
		return fsys.Remove(ctx, op.Path)
	}
	return nil
}

// Summary renders changes one per line, as the apply_patch tool reports them.
func Summary(changes []Change) string {
	var b strings.Builder
	for _, c := range changes {
		b.WriteString(c.String())
		b.WriteByte('\n')
	}
	return b.String()
}
