package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/llm/sim/scripted"
	"github.com/agentfleet/agentfleet/queue"
)

// Result is what one scenario did and what its verification found.
type Result struct {
	Scenario, Fault string
	FaultAt         time.Duration // after submission
	FaultFor        time.Duration // how long injecting it took (an outage's length)
	Duration        time.Duration // submission to the last task's end (or the deadline)

	Tasks, Succeeded, Failed, Cancelled, Stuck int
	FailureReasons                             map[string]int

	MissingTurns, DuplicateTurns, TurnSeqGaps int
	ModelRequests, ModelRepeats               int
	Events, EventGaps, EventDuplicates        int
	MissingSessionEnds                        int

	// Stall is the longest time after the fault without a task ending;
	// Drain is the fault to the last task's end.
	Stall, Drain time.Duration

	// Findings name the first tasks that failed or whose turns were
	// wrong, with their turn kinds in seq order, for the log.
	Findings []string
}

// Lost reports work lost: a task that did not succeed or never ended, a
// turn or event missing or doubled.
func (r Result) Lost() bool {
	return r.Tasks == 0 || r.Succeeded != r.Tasks || r.MissingTurns+r.DuplicateTurns+r.TurnSeqGaps > 0 ||
		r.EventGaps+r.EventDuplicates+r.MissingSessionEnds > 0
}

// Summary is one line for the progress log.
func (r Result) Summary() string {
	verdict := "ok"
	if r.Lost() {
		verdict = "LOST WORK"
	}
	return fmt.Sprintf("%s: %d/%d succeeded, %d failed %v, %d stuck; turns missing %d, doubled %d; events %d, gaps %d, doubled %d, no SESSION_END %d; model repeats %d; stall %s, drain %s (%s)",
		verdict, r.Succeeded, r.Tasks, r.Failed, r.FailureReasons, r.Stuck, r.MissingTurns, r.DuplicateTurns,
		r.Events, r.EventGaps, r.EventDuplicates, r.MissingSessionEnds, r.ModelRepeats,
		r.Stall.Round(time.Second), r.Drain.Round(time.Second), r.Fault)
}

// progress counts the tasks of the backlog (children included) by state.
func progress(ctx context.Context, f *fleetProcs, roots []uuid.UUID) (map[string]int, error) {
	rows, err := f.db.Query(ctx, `SELECT state, count(*) FROM tasks WHERE root_id = ANY($1) GROUP BY state`, roots)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	counts := map[string]int{}
	for rows.Next() {
		var state string
		var n int
		if err := rows.Scan(&state, &n); err != nil {
			return nil, err
		}
		counts[state] = n
	}
	return counts, rows.Err()
}

func terminal(counts map[string]int) int {
	return counts["succeeded"] + counts["failed"] + counts["cancelled"]
}

// waitUnderWay waits until a quarter of the backlog ended or, for a tree,
// half the parents are parked waiting for their children, or as many as
// half the fleet's sessions: with more parents than sessions, parents
// start as others end, and half of them may never be parked at once.
func waitUnderWay(ctx context.Context, f *fleetProcs, roots []uuid.UUID, tree bool) error {
	parked := min(len(roots)/2, workers*f.cfg.Slots/2)
	return poll(ctx, 5*time.Minute, func(c map[string]int) bool {
		if tree {
			return c["waiting"] >= parked
		}
		return terminal(c) >= len(roots)/4
	}, f, roots)
}

// waitEnded waits until every task of the backlog ended, or for d.
func waitEnded(ctx context.Context, f *fleetProcs, roots []uuid.UUID, d time.Duration) {
	_ = poll(ctx, d, func(c map[string]int) bool {
		total := 0
		for _, n := range c {
			total += n
		}
		return total > 0 && terminal(c) == total && c["succeeded"]+c["failed"]+c["cancelled"] >= len(roots)
	}, f, roots)
}

// poll reads the backlog's progress every 200 ms until done says so or d
// passes; a store that does not answer (an outage) is polled again.
func poll(ctx context.Context, d time.Duration, done func(map[string]int) bool, f *fleetProcs, roots []uuid.UUID) error {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		qctx, qcancel := context.WithTimeout(ctx, 2*time.Second)
		counts, err := progress(qctx, f, roots)
		qcancel()
		if err == nil && done(counts) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("chaos: backlog not there after %s (last counts %v)", d, counts)
		case <-tick.C:
		}
	}
}

// taskRow is what verification reads of one task.
type taskRow struct {
	id       uuid.UUID
	state    string
	reason   string
	prompt   string
	finished *time.Time
}

// verify fills r from the store, the model's counters and the EVENTS stream.
func verify(ctx context.Context, f *fleetProcs, roots []uuid.UUID, start, faultStart time.Time, before stats, r *Result) error {
	tasks, err := backlogTasks(ctx, f, roots)
	if err != nil {
		return err
	}
	countStates(tasks, r)
	recovery(tasks, faultStart, r)
	if err := checkTurns(ctx, f, tasks, r); err != nil {
		return err
	}
	after, err := modelStats(ctx, f)
	if err != nil {
		return err
	}
	r.ModelRequests, r.ModelRepeats = after.Requests-before.Requests, after.Repeats-before.Repeats
	return checkEvents(ctx, f, tasks, start, r)
}

func backlogTasks(ctx context.Context, f *fleetProcs, roots []uuid.UUID) ([]taskRow, error) {
	rows, err := f.db.Query(ctx, `SELECT id, state, coalesce(result->>'reason', error), spec->>'prompt', finished_at
		FROM tasks WHERE root_id = ANY($1)`, roots)
	if err != nil {
		return nil, fmt.Errorf("chaos: read the backlog: %w", err)
	}
	defer rows.Close()
	var tasks []taskRow
	for rows.Next() {
		var t taskRow
		if err := rows.Scan(&t.id, &t.state, &t.reason, &t.prompt, &t.finished); err != nil {
			return nil, err
		}
		tasks = append(tasks, t)
	}
	return tasks, rows.Err()
}

func countStates(tasks []taskRow, r *Result) {
	r.Tasks, r.FailureReasons = len(tasks), map[string]int{}
	for _, t := range tasks {
		switch t.state {
		case "succeeded":
			r.Succeeded++
		case "failed":
			r.Failed++
			r.FailureReasons[t.reason]++
		case "cancelled":
			r.Cancelled++
		default:
			r.Stuck++
		}
	}
}

// recovery measures the longest stretch after the fault began with no
// task ending, and the time to the last end.
func recovery(tasks []taskRow, faultStart time.Time, r *Result) {
	var ends []time.Time
	for _, t := range tasks {
		if t.finished != nil && t.finished.After(faultStart) {
			ends = append(ends, *t.finished)
		}
	}
	slices.SortFunc(ends, func(a, b time.Time) int { return a.Compare(b) })
	prev := faultStart
	for _, e := range ends {
		r.Stall = max(r.Stall, e.Sub(prev))
		prev = e
	}
	r.Drain = prev.Sub(faultStart)
}

// checkTurns compares each task's stored turns with its script: one
// assistant turn per step, every tool call answered exactly once (a round
// cut by a park or a crash may be answered over two turns, but no call
// twice), and every session's seqs gapless from 1.
func checkTurns(ctx context.Context, f *fleetProcs, tasks []taskRow, r *Result) error {
	for _, t := range tasks {
		if t.state == "failed" && len(r.Findings) < 5 {
			r.Findings = append(r.Findings, describeFailure(ctx, f, t))
		}
		if t.state != "succeeded" {
			continue // counted as not succeeded; its turns end early by design
		}
		var assistant, unanswered, doubled, gaps int
		err := f.db.QueryRow(ctx, turnCheckSQL, t.id).Scan(&assistant, &unanswered, &doubled, &gaps)
		if err != nil {
			return fmt.Errorf("chaos: read the turns of %s: %w", t.id, err)
		}
		want := len(scripted.Steps(t.prompt))
		r.MissingTurns += max(0, want-assistant) + unanswered
		r.DuplicateTurns += max(0, assistant-want) + doubled
		r.TurnSeqGaps += gaps
		if (assistant != want || unanswered+doubled+gaps > 0) && len(r.Findings) < 5 {
			r.Findings = append(r.Findings, describeTurns(ctx, f, t.id))
		}
	}
	return nil
}

// turnCheckSQL counts, for the task $1: its assistant turns; the tool
// calls with no result; the results beyond one per call; and the sessions
// whose seqs have a gap.
const turnCheckSQL = `
WITH t AS (
	SELECT tu.session_id, tu.seq, tu.kind, tu.payload::jsonb AS p
	FROM sessions s JOIN turns tu ON tu.session_id = s.id WHERE s.task_id = $1
), calls AS (
	SELECT c->>'id' AS id FROM t, jsonb_array_elements(coalesce(t.p->'tool_calls', '[]')) c
	WHERE t.kind = 'assistant'
), answers AS (
	SELECT a->>'tool_call_id' AS id, count(*) AS n FROM t, jsonb_array_elements(coalesce(t.p->'results', '[]')) a
	WHERE t.kind = 'tool_results' GROUP BY 1
)
SELECT
	(SELECT count(*) FROM t WHERE kind = 'assistant'),
	(SELECT count(*) FROM calls WHERE id NOT IN (SELECT id FROM answers)),
	(SELECT coalesce(sum(n - 1), 0)::int FROM answers),
	(SELECT count(*) FROM (SELECT session_id FROM t GROUP BY session_id HAVING max(seq) <> count(*)) g)`

// describeTurns lists a task's turns as "seq:kind" in order, per session.
func describeTurns(ctx context.Context, f *fleetProcs, id uuid.UUID) string {
	var kinds string
	err := f.db.QueryRow(ctx, `SELECT string_agg(tu.session_id::text || '/' || tu.seq || ':' || tu.kind, ' ' ORDER BY s.created_at, tu.seq)
		FROM sessions s JOIN turns tu ON tu.session_id = s.id WHERE s.task_id = $1`, id).Scan(&kinds)
	if err != nil {
		kinds = err.Error()
	}
	return fmt.Sprintf("task %s: %s", id, kinds)
}

// describeFailure names a failed task with its reason, the worker that
// ended it, its attempts, the start of its result and its turns, so that a
// lost task can be understood after the run's database is gone.
func describeFailure(ctx context.Context, f *fleetProcs, t taskRow) string {
	var worker, result string
	var attempts int
	err := f.db.QueryRow(ctx, `SELECT worker_id, attempts, left(coalesce(result::text, ''), 600) FROM tasks WHERE id = $1`, t.id).
		Scan(&worker, &attempts, &result)
	if err != nil {
		result = err.Error()
	}
	return fmt.Sprintf("failed %s (%s) on %s after %d attempt(s): %s; %s", t.id, t.reason, worker, attempts, result, describeTurns(ctx, f, t.id))
}

// stats are the model server's request counters.
type stats struct {
	Requests int `json:"requests"`
	Repeats  int `json:"repeats"`
}

func modelStats(ctx context.Context, f *fleetProcs) (stats, error) {
	var s stats
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, f.modelURL+"/stats", nil)
	if err != nil {
		return s, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return s, fmt.Errorf("chaos: model stats: %w", err)
	}
	defer func() { _ = resp.Body.Close() }()
	return s, json.NewDecoder(resp.Body).Decode(&s)
}

// checkEvents reads the EVENTS stream from the scenario's start and checks
// each session of the backlog: seqs from 1 without gaps or doubles, the
// last one SESSION_END. A SESSION_END being stored as the store already
// says the task ended is given a few seconds.
func checkEvents(ctx context.Context, f *fleetProcs, tasks []taskRow, start time.Time, r *Result) error {
	ids := map[string]bool{}
	for _, t := range tasks {
		ids[t.id.String()] = true
	}
	var err error
	for range 10 {
		var bySession map[string]map[uint64]string
		if bySession, err = readEvents(ctx, f, ids, start); err != nil {
			continue
		}
		sessionChecks(bySession, r)
		if r.EventGaps+r.EventDuplicates+r.MissingSessionEnds == 0 {
			return nil
		}
		if err := sleepCtx(ctx, time.Second); err != nil {
			return err
		}
	}
	return err
}

func sessionChecks(bySession map[string]map[uint64]string, r *Result) {
	r.Events, r.EventGaps, r.EventDuplicates, r.MissingSessionEnds = 0, 0, 0, 0
	for _, seqs := range bySession {
		var top uint64
		for seq, kind := range seqs {
			top = max(top, seq)
			if kind == "dup" {
				r.EventDuplicates++
			}
		}
		r.Events += len(seqs)
		r.EventGaps += int(top) - len(seqs)
		if seqs[top] != fleet.KindSessionEnd {
			r.MissingSessionEnds++
		}
	}
}

// readEvents returns, per session of the tasks in ids, each seq's kind
// ("dup" when a seq came twice).
func readEvents(ctx context.Context, f *fleetProcs, ids map[string]bool, start time.Time) (map[string]map[uint64]string, error) {
	from := start.Add(-time.Second)
	cons, err := f.js.OrderedConsumer(ctx, queue.DefaultEventsStream, jetstream.OrderedConsumerConfig{
		DeliverPolicy: jetstream.DeliverByStartTimePolicy, OptStartTime: &from})
	if err != nil {
		return nil, fmt.Errorf("chaos: read EVENTS: %w", err)
	}
	out := map[string]map[uint64]string{}
	for {
		batch, err := cons.FetchNoWait(1000)
		if err != nil {
			return nil, err
		}
		n := 0
		for m := range batch.Messages() {
			n++
			var ev queue.Event
			if json.Unmarshal(m.Data(), &ev) != nil || !ids[ev.TaskID] {
				continue
			}
			if out[ev.SessionID] == nil {
				out[ev.SessionID] = map[uint64]string{}
			}
			if _, seen := out[ev.SessionID][ev.Seq]; seen {
				out[ev.SessionID][ev.Seq] = "dup"
			} else {
				out[ev.SessionID][ev.Seq] = ev.Kind
			}
		}
		if err := batch.Error(); err != nil {
			return nil, err
		}
		if n == 0 {
			return out, nil
		}
	}
}
