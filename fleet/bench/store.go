package bench

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/agentfleet/agentfleet/store"
)

// countingStore counts the writes that reach a store (the bench's store
// writes per second). Reads pass through.
type countingStore struct {
	store.Store
	writes atomic.Int64
}

func (s *countingStore) CreateTask(ctx context.Context, p store.CreateTaskParams) (store.CreateTaskResult, error) {
	s.writes.Add(1)
	return s.Store.CreateTask(ctx, p)
}

func (s *countingStore) CreateTasks(ctx context.Context, p store.CreateTasksParams) ([]store.CreateTaskResult, error) {
	s.writes.Add(int64(len(p.Tasks)))
	return s.Store.CreateTasks(ctx, p)
}

func (s *countingStore) ClaimTask(ctx context.Context, p store.ClaimTaskParams) (store.Task, error) {
	s.writes.Add(1)
	return s.Store.ClaimTask(ctx, p)
}

func (s *countingStore) HeartbeatTask(ctx context.Context, p store.HeartbeatTaskParams) (time.Time, error) {
	s.writes.Add(1)
	return s.Store.HeartbeatTask(ctx, p)
}

func (s *countingStore) TransitionTask(ctx context.Context, p store.TransitionTaskParams) (store.Task, error) {
	s.writes.Add(1)
	return s.Store.TransitionTask(ctx, p)
}

func (s *countingStore) CancelSubtree(ctx context.Context, p store.CancelSubtreeParams) ([]store.CancelledTask, error) {
	s.writes.Add(1)
	return s.Store.CancelSubtree(ctx, p)
}

func (s *countingStore) CreateSession(ctx context.Context, p store.CreateSessionParams) (store.Session, error) {
	s.writes.Add(1)
	return s.Store.CreateSession(ctx, p)
}

func (s *countingStore) UpdateSession(ctx context.Context, p store.UpdateSessionParams) (store.Session, error) {
	s.writes.Add(1)
	return s.Store.UpdateSession(ctx, p)
}

func (s *countingStore) AppendTurns(ctx context.Context, p store.AppendTurnsParams) ([]store.Turn, error) {
	s.writes.Add(1)
	return s.Store.AppendTurns(ctx, p)
}

func (s *countingStore) PutToolOutput(ctx context.Context, p store.PutToolOutputParams) (store.ToolOutput, error) {
	s.writes.Add(1)
	return s.Store.PutToolOutput(ctx, p)
}

func (s *countingStore) PutArtifact(ctx context.Context, p store.PutArtifactParams) (store.Artifact, error) {
	s.writes.Add(1)
	return s.Store.PutArtifact(ctx, p)
}
