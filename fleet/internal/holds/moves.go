package holds

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/google/uuid"
)

// Moves. A queued task whose priority changes (set_priority) gets a new
// start message at its new level, published through the router; its old
// message stays at the old level. The move is recorded here with the
// new message's stream sequence, and a worker acks, without claiming, a
// start message of the task older than that (StaleStart): the task starts
// from its new place. Without the record (a crash between the publish and
// the record) both messages live, and whichever comes first starts the
// task once (the claim is a compare-and-set); the other finds it started.
// A dispatcher drops the record once the task is no longer queued.

const movedPrefix = "moved."

// Move records the new start message of a moved task.
type Move struct {
	TaskID   uuid.UUID `json:"task_id"`
	Seq      uint64    `json:"seq"`
	At       time.Time `json:"at"`
	Revision uint64    `json:"-"`
}

// Moved records that task id's current start message is the stream's
// message seq.
func (s *Set) Moved(ctx context.Context, id uuid.UUID, seq uint64) error {
	b, _ := json.Marshal(Move{TaskID: id, Seq: seq, At: time.Now().UTC()})
	if _, err := s.kv.Put(ctx, movedPrefix+id.String(), b); err != nil {
		return fmt.Errorf("holds: recording the move of task %s: %w", id, err)
	}
	return nil
}

// StaleStart reports whether the start message seq of task id was
// replaced by a move.
func (s *Set) StaleStart(id uuid.UUID, seq uint64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.moves[movedPrefix+id.String()]
	return ok && seq < m.Seq
}

// Moves returns the moves recorded.
func (s *Set) Moves() []Move {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Collect(maps.Values(s.moves))
}

// DropMove forgets m, unless it was recorded again since.
func (s *Set) DropMove(ctx context.Context, m Move) error {
	return s.drop(ctx, movedPrefix+m.TaskID.String(), m.Revision)
}
