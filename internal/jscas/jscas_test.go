package jscas_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentfleet/agentfleet/internal/jscas"
)

func TestConflict(t *testing.T) {
	for err, want := range map[error]bool{
		jetstream.ErrKeyExists:           true,
		jetstream.ErrKeyRevisionMismatch: true,
		fmt.Errorf("update: %w", &jetstream.APIError{Code: 400, ErrorCode: jetstream.JSErrCodeStreamWrongLastSequence}):         true,
		fmt.Errorf("update: %w", &jetstream.APIError{Code: 400, ErrorCode: jetstream.JSErrCodeStreamWrongLastSequenceConstant}): true,
		&jetstream.APIError{Code: 404, ErrorCode: jetstream.JSErrCodeStreamNotFound}:                                            false,
		errors.New("connection closed"): false,
		nil:                             false,
	} {
		if got := jscas.Conflict(err); got != want {
			t.Errorf("Conflict(%v) = %v, want %v", err, got, want)
		}
	}
}
