package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/agentfleet/agentfleet/agent"
	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/internal/storegate"
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
// Some turns are held back and written with the next write, because no
// effect depends on them yet and a run that dies before that write loses
// nothing a later run cannot redo:
//   - the opening prompt of a new session (turn 0, the spec's prompt): the
//     task spec holds it durably, and the next run submits it again;
//   - an answer (an assistant turn without tool calls) of the task's own
//     session: a run that dies before writing it asks the model again.
//
// A session row that does not exist yet (the task's first run) is created
// by the first write (store.AppendTurnsParams.CreateSession). finish hands
// what is held to the task's final transition (pendingAppend), so a
// trivial task's whole history and its end are one write; giveBack and
// the other ends flush it.
type turnRecorder struct {
	to recordInto

	// pending is what the next write carries: held turns, their usage and
	// cost, and the session row to create.
	pending store.AppendTurnsParams

	mu    sync.Mutex // guards usage, cost (read by control status and result)
	usage llm.Usage
	cost  float64
}

var _ agent.Recorder = (*turnRecorder)(nil)

// recordInto is what a turnRecorder records into, and whom it tells.
type recordInto struct {
	session  uuid.UUID                                                // the task's session (its id is the task's)
	workerID string                                                   // fences every write
	prompt   string                                                   // the spec's prompt: turn 0 of a new session
	limits   fleet.Limits                                             // the spec's token and cost limits
	appends  store.Store                                              // the store as given: appends wait out outages themselves
	loads    store.Store                                              // for reading turns (waits out outages)
	retry    func(context.Context, func(context.Context) error) error // waits out a store outage
	price    func(model string, u llm.Usage) float64
	turns    prometheus.Counter  // turns written
	stop     func(reason string) // stops the run (a limit, a lost task)
	budget   func()              // stops the run if its label's budget is spent
}

// newTurnRecorder starts from the session's stored totals; create, when
// set, is the session row to create with the first write (the session has
// no row nor turns yet).
func newTurnRecorder(to recordInto, s store.Session, create *store.CreateSessionParams) *turnRecorder {
	u := s.Usage
	t := &turnRecorder{to: to, cost: s.CostUSD, usage: llm.Usage{
		InputTokens: int(u.InputTokens), OutputTokens: int(u.OutputTokens), ReasoningTokens: int(u.ReasoningTokens),
		CacheReadTokens: int(u.CacheReadTokens), CacheWriteTokens: int(u.CacheWriteTokens)}}
	t.pending = store.AppendTurnsParams{SessionID: to.session, CreateSession: create}
	return t
}

// totals returns the session's usage and cost so far.
func (t *turnRecorder) totals() (llm.Usage, float64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.usage, t.cost
}

// Append records one turn durably (or holds it, see turnRecorder). While
// the store is away it waits for it: the session does not go on without
// its turn recorded.
func (t *turnRecorder) Append(ctx context.Context, sessionID string, turn agent.Turn) error {
	id, err := uuid.Parse(sessionID)
	if err != nil {
		return err
	}
	if id != t.to.session {
		return fmt.Errorf("recording turn %d: session %s is not this task's session %s", turn.Index, id, t.to.session)
	}
	payload, err := json.Marshal(turn)
	if err != nil {
		return fmt.Errorf("encoding turn %d: %w", turn.Index, err)
	}
	nt := store.NewTurn{Seq: int64(turn.Index) + 1, Kind: string(turn.Kind), Payload: payload}
	p := t.pending
	p.Turns = append(slices.Clip(p.Turns), nt)
	if turn.Kind == agent.TurnAssistant || turn.Kind == agent.TurnCompaction { // a compaction's summary calls cost tokens too
		cost := t.to.price(turn.Model, turn.Usage)
		nt.Usage, _ = json.Marshal(turnUsage{Usage: turn.Usage, CostUSD: cost})
		p.Turns[len(p.Turns)-1].Usage = nt.Usage
		p.AddUsage = p.AddUsage.Add(storeUsage(turn.Usage))
		p.AddCostUSD += cost
		t.add(turn.Usage, cost)
	}
	if t.mayHold(turn) {
		t.pending = p
		return nil
	}
	p.OwnerWorkerID = t.to.workerID
	if err := t.appendWithRetry(ctx, p); err != nil {
		t.noteLostOwnership(err) // the refused turn is dropped; what was held stays held
		return err
	}
	t.pending = p
	t.written()
	return nil
}

// mayHold reports whether turn may wait for the next write: the opening
// prompt (the first turn, the spec's prompt), or an answer.
func (t *turnRecorder) mayHold(turn agent.Turn) bool {
	opening := turn.Index == 0 && turn.Kind == agent.TurnUser && turn.Text == t.to.prompt
	answer := turn.Kind == agent.TurnAssistant && len(turn.ToolCalls) == 0
	return opening || answer
}

// written records that the pending write happened.
func (t *turnRecorder) written() {
	t.to.turns.Add(float64(len(t.pending.Turns)))
	t.pending = store.AppendTurnsParams{SessionID: t.pending.SessionID}
}

// rowPending reports whether the session row is still to be created (by
// the next write), so the session has no turns yet.
func (t *turnRecorder) rowPending() bool { return t.pending.CreateSession != nil }

// pendingAppend is what is held, as the Append of the task's final
// transition (fenced by this worker), or nil when nothing is; the caller
// reports a successful transition with written.
func (t *turnRecorder) pendingAppend() *store.AppendTurnsParams {
	if len(t.pending.Turns) == 0 {
		return nil
	}
	p := t.pending
	p.OwnerWorkerID = t.to.workerID
	return &p
}

// noteLostOwnership stops the run when a fenced append found the task no
// longer running here: cancelled (a cancel that came before this run served
// its control subject lands here) or taken over by another worker.
func (t *turnRecorder) noteLostOwnership(err error) {
	var no *store.NotOwnerError
	switch {
	case !errors.As(err, &no):
	case no.State == store.TaskCancelled:
		t.to.stop(stopCancelled)
	default:
		t.to.stop(stopLost)
	}
}

// flush writes what is held, unfenced: the run is ending and its turns
// belong in the history whatever the task's state. A conflict means they
// are there already (or another run wrote past them), so nothing is left
// to do.
func (t *turnRecorder) flush(ctx context.Context) error {
	if len(t.pending.Turns) == 0 {
		return nil
	}
	err := t.appendWithRetry(ctx, t.pending)
	if err == nil || errors.Is(err, store.ErrConflict) {
		t.written()
		return nil
	}
	return err
}

// appendWithRetry writes p, waiting out a store outage (storegate.Retry). A
// conflict after a failed attempt means that attempt committed before its
// connection broke: the turns are there.
func (t *turnRecorder) appendWithRetry(ctx context.Context, p store.AppendTurnsParams) error {
	attempts := 0
	return t.to.retry(ctx, func(ctx context.Context) error {
		attempts++
		_, err := t.to.appends.AppendTurns(ctx, p)
		if attempts > 1 && errors.Is(err, store.ErrConflict) && !errors.As(err, new(*store.NotOwnerError)) {
			return nil
		}
		return err
	})
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
	switch t.to.limits.Spent(tokens, total) {
	case fleet.SpentTokens:
		t.to.stop(stopTokens)
	case fleet.SpentCost:
		t.to.stop(stopCost)
	default:
		t.to.budget()
	}
}

// Load returns the recorded turns of a session, in order. A session whose
// row is still to be created has none, so Load skips the store.
func (t *turnRecorder) Load(ctx context.Context, sessionID string) ([]agent.Turn, error) {
	if t.rowPending() && sessionID == t.to.session.String() {
		return nil, nil
	}
	id, err := uuid.Parse(sessionID)
	if err != nil {
		return nil, err
	}
	return loadHistory(ctx, t.to.loads, id)
}

// loadHistory decodes the recorded turns of a session (tests reach it as
// LoadHistory, export_test.go).
func loadHistory(ctx context.Context, st store.Store, sessionID uuid.UUID) ([]agent.Turn, error) {
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

// recordInto is what the run's recorder records into: this task's
// session, fenced by this worker, priced with the profile's prices.
func (r *run) recordInto(pc ProviderConfig) recordInto {
	w := r.w
	return recordInto{session: r.task.ID, workerID: w.cfg.ID, prompt: r.spec.Prompt, limits: r.spec.Limits,
		appends: w.raw, loads: w.st, turns: w.metrics.turns, stop: r.abort, budget: r.checkBudget,
		retry: func(ctx context.Context, op func(context.Context) error) error {
			return storegate.Retry(ctx, w.health, w.graceOver, w.metrics.storeRetries.Inc, op)
		},
		price: func(model string, u llm.Usage) float64 {
			if model == "" {
				model = r.row.Model
			}
			return w.costOf(model, pc, u)
		}}
}

// turnUsage is what the store keeps as a turn's usage: the model call's
// tokens and what they cost (GET /v1/sessions/{id}/turns shows it).
type turnUsage struct {
	llm.Usage
	CostUSD float64 `json:"cost_usd"`
}
