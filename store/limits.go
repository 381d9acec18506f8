package store

import "fmt"

// Default size caps.
const (
	DefaultMaxPayloadBytes = 4 << 20  // 4 MiB
	DefaultMaxBlobBytes    = 64 << 20 // 64 MiB
)

// Limits caps the size of what callers may store. The zero value means the
// defaults.
type Limits struct {
	// MaxPayloadBytes caps each JSON document: a task spec, result and
	// waiting-for, a session config, a turn payload or usage. Default 4 MiB.
	MaxPayloadBytes int
	// MaxBlobBytes caps a tool output or an artifact. Default 64 MiB.
	MaxBlobBytes int
}

// WithDefaults fills zero fields with the defaults.
func (l Limits) WithDefaults() Limits {
	if l.MaxPayloadBytes == 0 {
		l.MaxPayloadBytes = DefaultMaxPayloadBytes
	}
	if l.MaxBlobBytes == 0 {
		l.MaxBlobBytes = DefaultMaxBlobBytes
	}
	return l
}

// Validate reports a negative cap.
func (l Limits) Validate() error {
	if l.MaxPayloadBytes < 0 {
		return fmt.Errorf("Limits.MaxPayloadBytes must be >= 0 (0 means %d), got %d", DefaultMaxPayloadBytes, l.MaxPayloadBytes)
	}
	if l.MaxBlobBytes < 0 {
		return fmt.Errorf("Limits.MaxBlobBytes must be >= 0 (0 means %d), got %d", DefaultMaxBlobBytes, l.MaxBlobBytes)
	}
	return nil
}
