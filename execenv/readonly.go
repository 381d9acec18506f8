package execenv

import (
	"context"
	"fmt"
)

// ReadOnly wraps env so that WriteFile, Remove and Rename fail with
// ErrReadOnly. Exec is passed through: a shell command can still change
// files, so ReadOnly guards the file tools, not the shell; combine it with
// a read-only tool set (no shell) or OS-level sandboxing when that matters.
func ReadOnly(env Environment) Environment { return readOnly{env} }

type readOnly struct{ Environment }

func (readOnly) WriteFile(_ context.Context, path string, _ []byte) error {
	return fmt.Errorf("%w: cannot write %s", ErrReadOnly, path)
}

func (readOnly) Remove(_ context.Context, path string) error {
	return fmt.Errorf("%w: cannot remove %s", ErrReadOnly, path)
}

func (readOnly) Rename(_ context.Context, from, to string) error {
	return fmt.Errorf("%w: cannot rename %s to %s", ErrReadOnly, from, to)
}
