package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/agent"
	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/store"
)

// turnRecorder is the agent.Recorder of a run: every turn goes to the store
// (store.AppendTurns, seq = turn index + 1) before the loop goes on, with
// the assistant turn's usage and cost added to the session totals in the
// same transaction, fenced by the worker id: a turn is written only while
// the task runs on this worker. After each assistant turn it checks the
// spec's token and cost limits. The session's loop goroutine is its only
// writer.
//
// One turn is held back: the opening prompt of a new session (turn 0, the
// spec's prompt) is written together with the turn after it. The task spec
// already holds it durably, and a run that dies before the next write leaves
// no turn, so the next run submits the same prompt again. finish and
// giveBack flush a held turn, so a task that ends early still shows it.
type turnRecorder struct {
	r     *run
	pc    ProviderConfig
	empty atomic.Bool     // the session was just created: Load has nothing to read
	fresh bool            // this run created the session
	held  []store.NewTurn // the opening prompt, not yet written

	mu    sync.Mutex // guards usage, cost (read by control status and result)
	usage llm.Usage
	cost  float64
}

var _ agent.Recorder = (*turnRecorder)(nil)

// newTurnRecorder starts from the session's stored totals; created says
// the session row was created by this run, so it has no turns to load.
func newTurnRecorder(r *run, s store.Session, pc ProviderConfig, created bool) *turnRecorder {
	u := s.Usage
	t := &turnRecorder{r: r, pc: pc, cost: s.CostUSD, usage: llm.Usage{
		InputTokens: int(u.InputTokens), OutputTokens: int(u.OutputTokens), ReasoningTokens: int(u.ReasoningTokens),
		CacheReadTokens: int(u.CacheReadTokens), CacheWriteTokens: int(u.CacheWriteTokens)}}
	t.empty.Store(created)
	t.fresh = created
	return t
}

// totals returns the session's usage and cost so far.
func (t *turnRecorder) totals() (llm.Usage, float64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.usage, t.cost
}

// Append records one turn durably, retrying temporary store failures.
func (t *turnRecorder) Append(ctx context.Context, sessionID string, turn agent.Turn) error {
	w := t.r.w
	if w.crash.Load() {
		return errCrashed
	}
	id, err := uuid.Parse(sessionID)
	if err != nil {
		return err
	}
	payload, err := json.Marshal(turn)
	if err != nil {
		return fmt.Errorf("encoding turn %d: %w", turn.Index, err)
	}
	nt := store.NewTurn{Seq: int64(turn.Index) + 1, Kind: string(turn.Kind), Payload: payload}
	p := store.AppendTurnsParams{SessionID: id}
	if turn.Kind == agent.TurnAssistant {
		nt.Usage, _ = json.Marshal(turn.Usage)
		p.AddUsage = storeUsage(turn.Usage)
		p.AddCostUSD = t.price(turn.Usage)
	}
	if t.isOpeningPrompt(sessionID, turn) {
		t.held = []store.NewTurn{nt}
		return nil
	}
	p.Turns = append(t.held, nt)
	p.OwnerWorkerID = w.cfg.ID
	if err := t.appendWithRetry(ctx, p); err != nil {
		t.noteLostOwnership(err)
		return err
	}
	w.metrics.turns.Add(float64(len(p.Turns)))
	t.held = nil
	if turn.Kind == agent.TurnAssistant {
		t.add(turn.Usage, p.AddCostUSD)
	}
	return nil
}

// noteLostOwnership stops the run when a fenced append found the task no
// longer running here: cancelled (a cancel that came before this run served
// its control subject lands here) or taken over by another worker.
func (t *turnRecorder) noteLostOwnership(err error) {
	var no *store.NotOwnerError
	switch {
	case !errors.As(err, &no):
	case no.State == store.TaskCancelled:
		t.r.abort(stopCancelled)
	default:
		t.r.abort(stopLost)
	}
}

// isOpeningPrompt reports whether turn is the spec's prompt opening the
// task's own session, which this run created.
func (t *turnRecorder) isOpeningPrompt(sessionID string, turn agent.Turn) bool {
	return turn.Index == 0 && turn.Kind == agent.TurnUser && turn.Text == t.r.spec.Prompt &&
		sessionID == t.r.task.ID.String() && t.fresh
}

// flush writes a held opening prompt.
func (t *turnRecorder) flush(ctx context.Context) error {
	if len(t.held) == 0 || t.r.w.crash.Load() {
		return nil
	}
	err := t.appendWithRetry(ctx, store.AppendTurnsParams{SessionID: t.r.task.ID, Turns: t.held})
	if err == nil {
		t.r.w.metrics.turns.Inc()
		t.held = nil
	}
	return err
}

func (t *turnRecorder) appendWithRetry(ctx context.Context, p store.AppendTurnsParams) error {
	st := t.r.w.st
	delay := 50 * time.Millisecond
	for attempt := 1; ; attempt++ {
		_, err := st.AppendTurns(ctx, p)
		switch {
		case err == nil:
			return nil
		case errors.As(err, new(*store.NotOwnerError)):
			return err
		case errors.Is(err, store.ErrConflict) && attempt > 1:
			return nil // an earlier attempt committed before its connection broke
		case !store.IsRetryable(err) || attempt == 5:
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(delay):
			delay *= 2
		}
	}
}

// add accumulates usage and checks the spec's token and cost limits; over a
// limit, the session is aborted (from another goroutine: the loop owner
// calls Append and Abort waits for it).
func (t *turnRecorder) add(u llm.Usage, cost float64) {
	t.mu.Lock()
	t.usage = t.usage.Add(u)
	t.cost += cost
	tokens := int64(t.usage.InputTokens + t.usage.OutputTokens)
	total := t.cost
	t.mu.Unlock()
	lim := t.r.spec.Limits
	switch {
	case lim.MaxTokens > 0 && tokens >= lim.MaxTokens:
		t.r.abort(stopTokens)
	case lim.MaxCostUSD > 0 && total >= lim.MaxCostUSD:
		t.r.abort(stopCost)
	}
}

// price is the cost of one model call at the configured prices.
func (t *turnRecorder) price(u llm.Usage) float64 {
	return (float64(u.InputTokens)*t.pc.InputPerMTok + float64(u.OutputTokens+u.ReasoningTokens)*t.pc.OutputPerMTok) / 1e6
}

// Load returns the recorded turns of a session, in order. A session this
// run created has none, so its first Load skips the store.
func (t *turnRecorder) Load(ctx context.Context, sessionID string) ([]agent.Turn, error) {
	if t.empty.Swap(false) && sessionID == t.r.task.ID.String() {
		return nil, nil
	}
	id, err := uuid.Parse(sessionID)
	if err != nil {
		return nil, err
	}
	return LoadHistory(ctx, t.r.w.st, id)
}

// LoadHistory decodes the recorded turns of a session.
func LoadHistory(ctx context.Context, st store.Store, sessionID uuid.UUID) ([]agent.Turn, error) {
	rows, err := st.LoadTurns(ctx, store.LoadTurnsParams{SessionID: sessionID})
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	turns := make([]agent.Turn, len(rows))
	for i, row := range rows {
		if err := json.Unmarshal(row.Payload, &turns[i]); err != nil {
			return nil, fmt.Errorf("decoding turn %d of session %s: %w", row.Seq, sessionID, err)
		}
	}
	return turns, nil
}

func storeUsage(u llm.Usage) store.Usage {
	return store.Usage{InputTokens: int64(u.InputTokens), OutputTokens: int64(u.OutputTokens),
		ReasoningTokens: int64(u.ReasoningTokens), CacheReadTokens: int64(u.CacheReadTokens),
		CacheWriteTokens: int64(u.CacheWriteTokens)}
}
