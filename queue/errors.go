package queue

import "errors"

// Sentinel errors callers branch on.
var (
	// ErrNotRunning is returned by Client.Control when no worker answers on the session's
	// control subject: the session is not running anywhere (queued, parked, or ended).
	ErrNotRunning = errors.New("queue: session is not running on any worker")
	// ErrSettled is returned when a Delivery is acked, naked or termed a second time.
	ErrSettled = errors.New("queue: delivery already settled")
	// ErrClosed is returned by operations on a closed Client, Puller or EventPublisher.
	ErrClosed = errors.New("queue: closed")
	// ErrBadMessage wraps the decoding error of a task message whose body is not a valid
	// TaskMessage (see Delivery.DecodeErr).
	ErrBadMessage = errors.New("queue: corrupt task message")
	// ErrBadEvent wraps the decoding error of a message on EVENTS that is not an Event.
	ErrBadEvent = errors.New("queue: corrupt event")
	// ErrControlRefused wraps the error a session's handler gave for a control request.
	ErrControlRefused = errors.New("queue: control request refused")
)
