package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	sqlite "modernc.org/sqlite"

	"github.com/agentfleet/agentfleet/store"
)

// SQLite result codes the store translates (https://sqlite.org/rescode.html).
const (
	codeBusy             = 5
	codeLocked           = 6
	codeConstraint       = 19
	codeConstraintFK     = 787
	codeConstraintCheck  = 275
	codeConstraintNotNul = 1299
)

// translate turns a driver error into the store's errors: the only place
// the driver's error type is looked at.
func translate(op string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("store: %s: %w", op, err)
	}
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("store: %s: %w", op, store.ErrNotFound)
	}
	if se, ok := errors.AsType[*sqlite.Error](err); ok {
		switch code := se.Code(); {
		case code == codeConstraintFK:
			return fmt.Errorf("store: %s: %w: %v", op, store.ErrNotFound, se)
		case code == codeConstraintCheck, code == codeConstraintNotNul:
			return store.Invalidf(op, "rejected by SQLite: %v", se)
		case code&0xff == codeConstraint:
			return fmt.Errorf("store: %s: %w: %v", op, store.ErrConflict, se)
		case code&0xff == codeBusy, code&0xff == codeLocked:
			return &store.RetryableError{Op: op, Err: se}
		}
	}
	return fmt.Errorf("store: %s: sqlite: %w", op, err)
}

// translateKeep passes through errors that are already the store's.
func translateKeep(op string, err error) error {
	if err == nil || store.KnownError(err) {
		return err
	}
	return translate(op, err)
}
