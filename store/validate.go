package store

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
)

// The Prepare functions check params and fill defaults. Drivers call them
// first, so both drivers reject the same input with the same errors.

// DefaultQueue is the queue of a task created without one.
const DefaultQueue = "default"

// DefaultTenant is the tenant of a task created without one (and of every
// task stored before tenants existed).
const DefaultTenant = "default"

// Page sizes of ListTasks and TaskTree.
const (
	DefaultListLimit = 100
	MaxListLimit     = 1000
	DefaultTreeLimit = 10000
)

// PrepareCreateTask checks one task; field prefixes error fields ("" or "Tasks[3].").
func (l Limits) PrepareCreateTask(p CreateTaskParams, field string) (CreateTaskParams, error) {
	l = l.WithDefaults()
	if p.ID == uuid.Nil {
		p.ID = NewID()
	}
	if p.Queue == "" {
		p.Queue = DefaultQueue
	}
	if err := checkName(field+"Queue", p.Queue); err != nil {
		return p, err
	}
	if p.Tenant == "" {
		p.Tenant = DefaultTenant
	}
	if err := checkName(field+"Tenant", p.Tenant); err != nil {
		return p, err
	}
	if err := checkText(field+"SubmittedBy", p.SubmittedBy, 512); err != nil {
		return p, err
	}
	if p.Priority < math.MinInt32 || p.Priority > math.MaxInt32 {
		return p, invalidf(field+"Priority", "%d does not fit the column (a 32-bit integer)", p.Priority)
	}
	if err := l.checkJSON(field+"Spec", p.Spec, true); err != nil {
		return p, err
	}
	if err := checkText(field+"IdempotencyKey", p.IdempotencyKey, 512); err != nil {
		return p, err
	}
	for k, v := range p.Labels {
		if k == "" {
			return p, invalidf(field+"Labels", "a label key is empty")
		}
		if err := checkText(fmt.Sprintf("%sLabels[%q]", field, k), k+v, 1024); err != nil {
			return p, err
		}
	}
	return p, nil
}

// PrepareCreateTasks checks a batch.
func (l Limits) PrepareCreateTasks(p CreateTasksParams) (CreateTasksParams, error) {
	if len(p.Tasks) == 0 {
		return p, invalidf("Tasks", "the batch is empty; pass at least one task")
	}
	out := CreateTasksParams{Tasks: make([]CreateTaskParams, len(p.Tasks))}
	for i, t := range p.Tasks {
		var err error
		if out.Tasks[i], err = l.PrepareCreateTask(t, fmt.Sprintf("Tasks[%d].", i)); err != nil {
			return p, err
		}
	}
	return out, nil
}

// PrepareClaim checks a claim.
func PrepareClaim(p ClaimTaskParams) (ClaimTaskParams, error) {
	if err := checkID("ID", p.ID); err != nil {
		return p, err
	}
	if err := checkRequired("WorkerID", p.WorkerID); err != nil {
		return p, err
	}
	if len(p.From) == 0 {
		p.From = []TaskState{TaskQueued}
	}
	for _, s := range p.From {
		if s != TaskQueued && s != TaskWaiting {
			return p, invalidf("From", "a claim starts from queued or waiting, not %q (use StaleBefore to take over a running task)", s)
		}
	}
	return p, nil
}

// PrepareHeartbeat checks a heartbeat.
func PrepareHeartbeat(p HeartbeatTaskParams) (HeartbeatTaskParams, error) {
	if err := checkID("ID", p.ID); err != nil {
		return p, err
	}
	return p, checkRequired("WorkerID", p.WorkerID)
}

// PrepareTransition checks a transition against the state machine.
func (l Limits) PrepareTransition(p TransitionTaskParams) (TransitionTaskParams, error) {
	l = l.WithDefaults()
	if err := checkID("ID", p.ID); err != nil {
		return p, err
	}
	if err := CheckTransition(p.From, p.To); err != nil {
		return p, err
	}
	if p.To == TaskRunning {
		return p, invalidf("To", "use ClaimTask to move a task to running (it records the worker)")
	}
	if err := l.checkJSON("Result", p.Result, false); err != nil {
		return p, err
	}
	if p.To != TaskWaiting && p.WaitingFor != nil {
		return p, invalidf("WaitingFor", "only a transition to waiting takes WaitingFor, not one to %s", p.To)
	}
	if err := l.checkJSON("WaitingFor", p.WaitingFor, false); err != nil {
		return p, err
	}
	if err := checkText("Error", p.Error, l.MaxPayloadBytes); err != nil || p.Append == nil {
		return p, err
	}
	a, err := l.prepareAppendTurns(*p.Append, "Append.")
	if err != nil {
		return p, err
	}
	if a.CreateSession != nil && a.CreateSession.TaskID != p.ID {
		return p, invalidf("Append.CreateSession.TaskID", "the session must be the transitioned task's (%s), got %s", p.ID, a.CreateSession.TaskID)
	}
	p.Append = &a
	return p, nil
}

// PrepareCancel checks a subtree cancellation.
func PrepareCancel(p CancelSubtreeParams) (CancelSubtreeParams, error) {
	if p.Reason == "" {
		p.Reason = "cancelled"
	}
	return p, checkID("ID", p.ID)
}

// TaskFilter is the decoded form of ListTasksParams for drivers.
type TaskFilter struct {
	ListTasksParams
	AfterCreated time.Time // keyset position from the cursor; zero on the first page
	AfterID      uuid.UUID
	Search       SearchQuery // parsed Query; empty when Query is blank
}

// PrepareList checks list params and decodes the cursor.
func PrepareList(p ListTasksParams) (TaskFilter, error) {
	f := TaskFilter{ListTasksParams: p}
	for _, s := range p.States {
		if !s.Valid() {
			return f, invalidf("States", "unknown task state %q (one of %v)", s, TaskStates)
		}
	}
	f.Query = strings.TrimSpace(f.Query)
	if len(f.Query) > MaxQueryLen {
		return f, invalidf("Query", "is %d bytes, longer than %d: search with fewer words", len(f.Query), MaxQueryLen)
	}
	if f.Query != "" {
		var err error
		if f.Search, err = ParseQuery(f.Query); err != nil {
			return f, err
		}
	}
	switch {
	case f.Limit == 0:
		f.Limit = DefaultListLimit
	case f.Limit < 0 || f.Limit > MaxListLimit:
		return f, invalidf("Limit", "must be between 1 and %d, got %d", MaxListLimit, f.Limit)
	}
	if p.Cursor != "" {
		var err error
		if f.AfterCreated, f.AfterID, err = DecodeCursor(p.Cursor); err != nil {
			return f, err
		}
	}
	return f, nil
}

// PrepareTree checks tree params.
func PrepareTree(p TaskTreeParams) (TaskTreeParams, error) {
	if p.Limit <= 0 {
		p.Limit = DefaultTreeLimit
	}
	return p, checkID("RootID", p.RootID)
}

// PrepareCreateSession checks a new session.
func (l Limits) PrepareCreateSession(p CreateSessionParams) (CreateSessionParams, error) {
	return l.prepareCreateSession(p, "")
}

// prepareCreateSession checks a session; field prefixes the names of the
// fields in errors (e.g. "Append.CreateSession.").
func (l Limits) prepareCreateSession(p CreateSessionParams, field string) (CreateSessionParams, error) {
	l = l.WithDefaults()
	if p.ID == uuid.Nil {
		p.ID = NewID()
	}
	if p.State == "" {
		p.State = "idle"
	}
	if err := checkID(field+"TaskID", p.TaskID); err != nil {
		return p, err
	}
	return p, l.checkJSON(field+"Config", p.Config, false)
}

// PrepareUpdateSession checks a session update.
func (l Limits) PrepareUpdateSession(p UpdateSessionParams) (UpdateSessionParams, error) {
	l = l.WithDefaults()
	if err := checkID("ID", p.ID); err != nil {
		return p, err
	}
	if err := checkUsage("AddUsage", p.AddUsage, p.AddCostUSD); err != nil {
		return p, err
	}
	return p, l.checkJSON("Config", p.Config, false)
}

// PrepareAppendTurns checks a batch of turns: consecutive seqs from >= 1,
// kinds present, JSON valid and under the cap.
func (l Limits) PrepareAppendTurns(p AppendTurnsParams) (AppendTurnsParams, error) {
	return l.prepareAppendTurns(p, "")
}

// prepareAppendTurns checks an append; field prefixes the names of the
// fields in errors (e.g. "Append.").
func (l Limits) prepareAppendTurns(p AppendTurnsParams, field string) (AppendTurnsParams, error) {
	l = l.WithDefaults()
	if err := checkID(field+"SessionID", p.SessionID); err != nil {
		return p, err
	}
	if len(p.Turns) == 0 {
		return p, invalidf(field+"Turns", "the batch is empty; pass at least one turn")
	}
	if err := checkUsage(field+"AddUsage", p.AddUsage, p.AddCostUSD); err != nil {
		return p, err
	}
	if p.CreateSession != nil {
		if err := l.prepareSessionOfAppend(&p, field); err != nil {
			return p, err
		}
	}
	for i, t := range p.Turns {
		f := fmt.Sprintf("%sTurns[%d].", field, i)
		if t.Seq < 1 {
			return p, invalidf(f+"Seq", "seqs start at 1, got %d", t.Seq)
		}
		if i > 0 && t.Seq != p.Turns[i-1].Seq+1 {
			return p, invalidf(f+"Seq", "seqs in a batch must be consecutive: %d follows %d", t.Seq, p.Turns[i-1].Seq)
		}
		if err := checkName(f+"Kind", t.Kind); err != nil {
			return p, err
		}
		if err := l.checkJSON(f+"Payload", t.Payload, true); err != nil {
			return p, err
		}
		if err := l.checkJSON(f+"Usage", t.Usage, false); err != nil {
			return p, err
		}
	}
	return p, nil
}

// PrepareLoadTurns checks a history read.
func PrepareLoadTurns(p LoadTurnsParams) (LoadTurnsParams, error) {
	if p.AfterSeq < 0 {
		return p, invalidf("AfterSeq", "must be >= 0, got %d", p.AfterSeq)
	}
	if p.Limit < 0 {
		return p, invalidf("Limit", "must be >= 0 (0: all), got %d", p.Limit)
	}
	return p, checkID("SessionID", p.SessionID)
}

// PreparePutToolOutput checks a tool output.
func (l Limits) PreparePutToolOutput(p PutToolOutputParams) (PutToolOutputParams, error) {
	l = l.WithDefaults()
	if err := checkID("SessionID", p.SessionID); err != nil {
		return p, err
	}
	if err := checkRequired("CallID", p.CallID); err != nil {
		return p, err
	}
	if err := checkName("Tool", p.Tool); err != nil {
		return p, err
	}
	if len(p.Output) > l.MaxBlobBytes {
		return p, &PayloadTooLargeError{Field: "Output", Size: len(p.Output), Limit: l.MaxBlobBytes, Knob: "MaxBlobBytes"}
	}
	return p, nil
}

// PreparePutArtifact checks an artifact.
func (l Limits) PreparePutArtifact(p PutArtifactParams) (PutArtifactParams, error) {
	l = l.WithDefaults()
	if p.ContentType == "" {
		p.ContentType = "application/octet-stream"
	}
	if err := checkID("TaskID", p.TaskID); err != nil {
		return p, err
	}
	if err := checkName("Kind", p.Kind); err != nil {
		return p, err
	}
	if len(p.Content) > l.MaxBlobBytes {
		return p, &PayloadTooLargeError{Field: "Content", Size: len(p.Content), Limit: l.MaxBlobBytes, Knob: "MaxBlobBytes"}
	}
	return p, nil
}

// NewID returns a new time-ordered id (UUIDv7), which keeps b-tree inserts local.
func NewID() uuid.UUID {
	return uuid.Must(uuid.NewV7())
}

// Timestamp normalizes a time to what both drivers store: UTC, microseconds.
func Timestamp(t time.Time) time.Time {
	return t.UTC().Truncate(time.Microsecond)
}

func (l Limits) checkJSON(field string, v json.RawMessage, required bool) error {
	if v == nil {
		if required {
			return invalidf(field, "is required (a JSON document)")
		}
		return nil
	}
	if len(v) > l.MaxPayloadBytes {
		return &PayloadTooLargeError{Field: field, Size: len(v), Limit: l.MaxPayloadBytes, Knob: "MaxPayloadBytes"}
	}
	if !utf8.Valid(v) {
		return invalidf(field, "is not valid UTF-8")
	}
	if !json.Valid(v) {
		return invalidf(field, "is not valid JSON: %s", preview(v))
	}
	return nil
}

func checkID(field string, id uuid.UUID) error {
	if id == uuid.Nil {
		return invalidf(field, "is required (a task or session id)")
	}
	return nil
}

func checkRequired(field, v string) error {
	if strings.TrimSpace(v) == "" {
		return invalidf(field, "is required")
	}
	return checkText(field, v, 1024)
}

func checkName(field, v string) error {
	if v == "" {
		return invalidf(field, "is required")
	}
	return checkText(field, v, 200)
}

func checkText(field, v string, max int) error {
	if len(v) > max {
		return invalidf(field, "is %d bytes, longer than %d", len(v), max)
	}
	if !utf8.ValidString(v) || strings.ContainsRune(v, 0) {
		return invalidf(field, "must be UTF-8 text without NUL bytes")
	}
	return nil
}

func checkUsage(field string, u Usage, cost float64) error {
	if u.InputTokens < 0 || u.OutputTokens < 0 || u.ReasoningTokens < 0 || u.CacheReadTokens < 0 || u.CacheWriteTokens < 0 {
		return invalidf(field, "token counts must be >= 0, got %+v", u)
	}
	if cost < 0 {
		return invalidf("AddCostUSD", "must be >= 0, got %g", cost)
	}
	return nil
}

func preview(b []byte) string {
	const n = 40
	if len(b) > n {
		return fmt.Sprintf("%q...", b[:n])
	}
	return fmt.Sprintf("%q", b)
}

// prepareSessionOfAppend checks the session an append creates: its id is
// the append's, and the turns open it at seq 1.
func (l Limits) prepareSessionOfAppend(p *AppendTurnsParams, field string) error {
	c := *p.CreateSession
	if c.ID != uuid.Nil && c.ID != p.SessionID {
		return invalidf(field+"CreateSession.ID", "must be SessionID (%s) or empty, got %s", p.SessionID, c.ID)
	}
	c.ID = p.SessionID
	if first := p.Turns[0].Seq; first != 1 {
		return invalidf(field+"Turns[0].Seq", "a batch that creates its session starts at seq 1, got %d", first)
	}
	c, err := l.prepareCreateSession(c, field+"CreateSession.")
	if err != nil {
		return err
	}
	p.CreateSession = &c
	return nil
}
