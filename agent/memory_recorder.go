package agent

import (
	"context"
	"fmt"
	"sync"
)

// MemoryRecorder keeps turns in memory: for tests and single-process hosts
// that want Resume without a database. Safe for concurrent use.
type MemoryRecorder struct {
	mu    sync.Mutex
	turns map[string][]Turn
}

// NewMemoryRecorder returns an empty recorder.
func NewMemoryRecorder() *MemoryRecorder { return &MemoryRecorder{turns: map[string][]Turn{}} }

// Append stores turn; its Index must be the next one for the session.
func (m *MemoryRecorder) Append(_ context.Context, sessionID string, turn Turn) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if want := len(m.turns[sessionID]); turn.Index != want {
		return fmt.Errorf("agent: MemoryRecorder: turn index %d for session %s, want %d", turn.Index, sessionID, want)
	}
	m.turns[sessionID] = append(m.turns[sessionID], turn)
	return nil
}

// Load returns a copy of the session's turns.
func (m *MemoryRecorder) Load(_ context.Context, sessionID string) ([]Turn, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]Turn(nil), m.turns[sessionID]...), nil
}

// Truncate keeps the first n turns of a session, simulating a crash before
// the later ones were written (for resume tests).
func (m *MemoryRecorder) Truncate(sessionID string, n int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if n < len(m.turns[sessionID]) {
		m.turns[sessionID] = m.turns[sessionID][:n]
	}
}
