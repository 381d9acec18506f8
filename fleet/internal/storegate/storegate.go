// Package storegate keeps a worker going through store outages.
//
// A store call that fails with a retryable error (the
// backend is away or restarting) marks the store down. While it is down the
// worker pulls nothing (the puller's gate is shut) and is not ready, and
// one goroutine pings the store until it answers. The calls in flight wait
// in Retry (and Store): a claim keeps its message (the delivery's heartbeat keeps
// it in progress), a session keeps its turn, a final transition its result.
// So an outage of any length spends no delivery of a message and fails no
// task; work resumes where it was when the store is back.
package storegate

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/agentfleet/agentfleet/store"
)

const (
	firstStoreBackoff = 100 * time.Millisecond
	maxStoreBackoff   = 5 * time.Second
)

// Health says whether the store answers. Safe for concurrent use.
type Health struct {
	st  store.Store
	log *slog.Logger
	up  prometheus.Gauge
	// downEffect and upEffect say what an outage means for the caller,
	// in the lines logged when the store goes down and comes back.
	downEffect, upEffect string

	mu     sync.Mutex
	open   chan struct{} // closed while the store is up
	downed chan struct{} // signalled when the store goes down
}

// NewHealth watches st, logging its changes to log (once each way, with
// downEffect and upEffect saying what they mean for the caller, as
// "pulling stops until it does") and setting up to 1 while it answers, 0
// while it does not.
func NewHealth(st store.Store, log *slog.Logger, up prometheus.Gauge, downEffect, upEffect string) *Health {
	h := &Health{st: st, log: log, up: up, downEffect: downEffect, upEffect: upEffect,
		open: make(chan struct{}), downed: make(chan struct{}, 1)}
	close(h.open)
	up.Set(1)
	return h
}

// IsUp reports whether the store answered the last call.
func (h *Health) IsUp() bool {
	select {
	case <-h.gate():
		return true
	default:
		return false
	}
}

func (h *Health) gate() <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.open
}

// Wait returns once the store is up, or ctx's error. It is the puller's gate.
func (h *Health) Wait(ctx context.Context) error {
	select {
	case <-h.gate():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Observe notes the outcome of a store call: a retryable error marks the
// store down, anything else (success, or an answer such as not found or a
// conflict) up.
func (h *Health) Observe(err error) {
	if store.IsRetryable(err) {
		h.markDown(err)
	} else if err == nil || store.KnownError(err) {
		h.markUp()
	}
}

func (h *Health) markDown(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	select {
	case <-h.open:
	default:
		return // down already
	}
	h.open = make(chan struct{})
	h.up.Set(0)
	h.log.Warn("the store does not answer; "+h.downEffect, "err", err)
	select {
	case h.downed <- struct{}{}:
	default:
	}
}

func (h *Health) markUp() {
	h.mu.Lock()
	defer h.mu.Unlock()
	select {
	case <-h.open:
		return // up already
	default:
	}
	close(h.open)
	h.up.Set(1)
	h.log.Info("the store answers again; " + h.upEffect)
}

// Watch pings the store while it is down, until ctx ends.
func (h *Health) Watch(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-h.downed:
		}
		delay := firstStoreBackoff
		for !h.IsUp() {
			pctx, cancel := context.WithTimeout(ctx, maxStoreBackoff)
			err := h.st.Ping(pctx)
			cancel()
			if err == nil {
				h.markUp()
				break
			}
			if !sleepCtx(ctx, delay) {
				return
			}
			delay = min(2*delay, maxStoreBackoff)
		}
	}
}

// Retry runs op until it returns anything but a retryable store error,
// ctx ends, or giveUp is closed (nil: never), and returns op's last error.
// Every outcome is noted in h; onRetry (nil: none) is called before each
// wait. Between attempts it waits with a backoff doubling up to
// maxStoreBackoff. It always makes the first attempt.
func Retry(ctx context.Context, h *Health, giveUp <-chan struct{}, onRetry func(), op func(context.Context) error) error {
	delay := firstStoreBackoff
	for {
		err := op(ctx)
		h.Observe(err)
		if !store.IsRetryable(err) {
			return err
		}
		if onRetry != nil {
			onRetry()
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-giveUp:
			t.Stop()
			return err
		case <-t.C:
		}
		delay = min(2*delay, maxStoreBackoff)
	}
}

// sleepCtx waits d and reports true, or false when ctx ends first.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// Store is the store as a worker's runs and claims see it: every call
// waits out an outage (Retry, giving up when GiveUp is closed: a drain's
// grace is over). A write whose commit landed just as its connection broke is
// answered by a retry with ErrConflict, not done twice: task transitions
// and claims are compare-and-set, creations carry idempotency keys, and
// puts overwrite; each caller already reads what a conflict left.
//
// Not wrapped, so they go straight to the store: HeartbeatTask (a missed
// beat is harmless, and the heartbeat must not hold up a run's end), Ping,
// and AppendTurns (the turn recorder retries it itself, as only it knows
// what a conflict after a broken commit means for a turn batch).
type Store struct {
	store.Store
	Health  *Health
	GiveUp  <-chan struct{} // nil: never
	OnRetry func()          // nil: none; called before each wait
}

// waitFor runs f(ctx, p) through Retry.
func waitFor[P, R any](s Store, ctx context.Context, f func(context.Context, P) (R, error), p P) (R, error) {
	var r R
	err := Retry(ctx, s.Health, s.GiveUp, s.OnRetry, func(ctx context.Context) (err error) {
		r, err = f(ctx, p)
		return err
	})
	return r, err
}

func (s Store) CreateTask(ctx context.Context, p store.CreateTaskParams) (store.CreateTaskResult, error) {
	return waitFor(s, ctx, s.Store.CreateTask, p)
}

func (s Store) GetTask(ctx context.Context, p store.GetTaskParams) (store.Task, error) {
	return waitFor(s, ctx, s.Store.GetTask, p)
}

func (s Store) ClaimTask(ctx context.Context, p store.ClaimTaskParams) (store.Task, error) {
	return waitFor(s, ctx, s.Store.ClaimTask, p)
}

func (s Store) TransitionTask(ctx context.Context, p store.TransitionTaskParams) (store.Task, error) {
	return waitFor(s, ctx, s.Store.TransitionTask, p)
}

func (s Store) CancelSubtree(ctx context.Context, p store.CancelSubtreeParams) ([]store.CancelledTask, error) {
	return waitFor(s, ctx, s.Store.CancelSubtree, p)
}

func (s Store) ListTasks(ctx context.Context, p store.ListTasksParams) (store.TaskPage, error) {
	return waitFor(s, ctx, s.Store.ListTasks, p)
}

func (s Store) Children(ctx context.Context, p store.ChildrenParams) (store.ChildrenResult, error) {
	return waitFor(s, ctx, s.Store.Children, p)
}

func (s Store) GetSession(ctx context.Context, p store.GetSessionParams) (store.Session, error) {
	return waitFor(s, ctx, s.Store.GetSession, p)
}

func (s Store) UpdateSession(ctx context.Context, p store.UpdateSessionParams) (store.Session, error) {
	return waitFor(s, ctx, s.Store.UpdateSession, p)
}

func (s Store) LoadTurns(ctx context.Context, p store.LoadTurnsParams) ([]store.Turn, error) {
	return waitFor(s, ctx, s.Store.LoadTurns, p)
}

func (s Store) PutToolOutput(ctx context.Context, p store.PutToolOutputParams) (store.ToolOutput, error) {
	return waitFor(s, ctx, s.Store.PutToolOutput, p)
}

func (s Store) PutArtifact(ctx context.Context, p store.PutArtifactParams) (store.Artifact, error) {
	return waitFor(s, ctx, s.Store.PutArtifact, p)
}

func (s Store) GetArtifact(ctx context.Context, p store.GetArtifactParams) (store.Artifact, error) {
	return waitFor(s, ctx, s.Store.GetArtifact, p)
}

func (s Store) ListArtifacts(ctx context.Context, p store.ListArtifactsParams) ([]store.Artifact, error) {
	return waitFor(s, ctx, s.Store.ListArtifacts, p)
}
