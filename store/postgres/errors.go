package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/agentfleet/agentfleet/store"
)

// translate turns a pgx error into the store's errors: the only place the
// driver's error types are looked at.
func translate(op string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("store: %s: %w", op, err)
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("store: %s: %w", op, store.ErrNotFound)
	}
	if pgErr, ok := errors.AsType[*pgconn.PgError](err); ok {
		return translatePgError(op, pgErr)
	}
	if retryableTransport(err) {
		return &store.RetryableError{Op: op, Err: err}
	}
	return fmt.Errorf("store: %s: %w", op, err)
}

func translatePgError(op string, e *pgconn.PgError) error {
	switch {
	case e.Code == "23505": // unique_violation
		return fmt.Errorf("store: %s: %w (%s)", op, store.ErrConflict, e.ConstraintName)
	case e.Code == "23503": // foreign_key_violation
		return fmt.Errorf("store: %s: %w: %s", op, store.ErrNotFound, e.Detail)
	case e.Code == "22P02", e.Code == "22021", e.Code == "22P05", e.Code == "54000", e.Code == "22001":
		return store.Invalidf(op, "rejected by Postgres: %s", e.Message)
	case e.Code == "40001", e.Code == "40P01": // serialization failure, deadlock
		return &store.RetryableError{Op: op, Err: e}
	case e.Code[:2] == "08", e.Code[:2] == "53", e.Code[:2] == "57": // connection, resources, shutdown
		return &store.RetryableError{Op: op, Err: e}
	}
	return fmt.Errorf("store: %s: postgres: %w", op, e)
}

// retryableTransport reports failures of the connection rather than of the
// statement: the server went away, refused us or was unreachable.
func retryableTransport(err error) bool {
	var connectErr *pgconn.ConnectError
	var netErr net.Error
	switch {
	case pgconn.SafeToRetry(err), errors.As(err, &connectErr), errors.As(err, &netErr):
		return true
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, net.ErrClosed):
		return true
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return true
	}
	return false
}

// translateKeep passes through errors that are already the store's.
func translateKeep(op string, err error) error {
	if err == nil || store.KnownError(err) {
		return err
	}
	return translate(op, err)
}
