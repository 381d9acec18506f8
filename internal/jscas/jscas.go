// Package jscas recognises a JetStream compare-and-set that lost: a write
// refused because its subject (or key-value key) changed since the writer
// read it. It is the one rule for the queue's gates (a publish expecting
// the subject's last sequence), the budgets and the rate limiter (key-value
// Create and Update).
package jscas

import (
	"errors"

	"github.com/nats-io/nats.go/jetstream"
)

// Conflict reports whether err is a lost compare-and-set: a key that
// already exists (Create), a revision that no longer matches (Update), or
// a publish whose expected last sequence did not match. A single-replica
// stream reports the last as API error 10071, a replicated one as 10164.
func Conflict(err error) bool {
	if errors.Is(err, jetstream.ErrKeyExists) || errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
		return true
	}
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && (apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence ||
		apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant)
}
