package store

import (
	"context"
	"encoding/json"
	"time"

	"github.com/google/uuid"
)

// Store is the persistence seam of agentfleet: tasks, sessions, turns, tool
// outputs and artifacts. Every method takes a context and a params struct and
// returns typed rows. Implementations translate backend errors at the seam:
// callers see ErrNotFound, ErrConflict, ErrInvalid (often as *InvalidError or
// *PayloadTooLargeError) and errors whose Retryable method reports true,
// never driver types.
//
// The drivers are store/postgres and store/sqlite; storetest.Exercise is the
// conformance suite both pass. All methods are safe for concurrent use.
type Store interface { //nolint:interfacebloat // the one seam of the two drivers, with one conformance suite (storetest, STYLE 4)
	// CreateTask inserts a task in state queued. With an IdempotencyKey that
	// already exists it inserts nothing and returns the first task with
	// Existing set. With a ParentID, RootID and Depth are derived from the
	// parent (ErrNotFound when it does not exist).
	CreateTask(ctx context.Context, p CreateTaskParams) (CreateTaskResult, error)
	// CreateTasks is CreateTask for a batch, in one transaction: either every
	// task is created (or found by its key) or none is. Results are in the
	// order of p.Tasks.
	CreateTasks(ctx context.Context, p CreateTasksParams) ([]CreateTaskResult, error)
	// GetTask returns one task, ErrNotFound when there is none.
	GetTask(ctx context.Context, p GetTaskParams) (Task, error)
	// ClaimTask moves a task from one of p.From (default queued) to running,
	// sets its worker, increments Attempts and stamps StartedAt (first claim
	// only) and HeartbeatAt. A running task whose heartbeat is older than
	// p.StaleBefore may be taken over. ErrConflict when the task is in no
	// claimable state or its direct parent is cancelled (a task under a
	// cancelled parent never starts, see the package doc): exactly one of
	// many concurrent claimers wins.
	ClaimTask(ctx context.Context, p ClaimTaskParams) (Task, error)
	// HeartbeatTask stamps HeartbeatAt on a running task owned by p.WorkerID
	// and returns the stamp (not the task: a heartbeat comes every few
	// seconds for every running task, and the row would bring its spec).
	// ErrConflict means the worker no longer owns the task and must stop.
	HeartbeatTask(ctx context.Context, p HeartbeatTaskParams) (time.Time, error)
	// TransitionTask moves a task from p.From to p.To (compare-and-set).
	// Transitions not allowed by CanTransition are *InvalidError (ErrInvalid);
	// a task not in p.From (or, from running, owned by another worker than a
	// non-empty p.WorkerID) is ErrConflict. Every transition clears
	// HeartbeatAt. A reopen (succeeded or failed to queued, see Reopens)
	// also clears FinishedAt, WaitingFor, Result and Error (Result and
	// Error take p's, normally none), so a task that runs again never shows
	// the outcome of its previous end as current and its next end writes
	// its own; Attempts and StartedAt are kept. Cancelled is never reopened.
	TransitionTask(ctx context.Context, p TransitionTaskParams) (Task, error)
	// CancelSubtree cancels the task p.ID and every descendant that is not
	// terminal, in one transaction, and reports what it cancelled.
	CancelSubtree(ctx context.Context, p CancelSubtreeParams) ([]CancelledTask, error)
	// ListTasks returns one page of tasks matching p, newest first.
	ListTasks(ctx context.Context, p ListTasksParams) (TaskPage, error)
	// TaskTree returns the tasks of a tree by depth then creation, the root
	// first. ErrNotFound when the root does not exist.
	TaskTree(ctx context.Context, p TaskTreeParams) ([]Task, error)
	// Children returns the direct children of a task with a summary that says
	// whether all of them are terminal (to wake a parked parent).
	Children(ctx context.Context, p ChildrenParams) (ChildrenResult, error)
	// CountTasks counts tasks by state; states with no task are absent.
	CountTasks(ctx context.Context, p CountTasksParams) (map[TaskState]int64, error)

	// CreateSession inserts a session for an existing task (ErrNotFound
	// otherwise). A session id that exists already is ErrConflict.
	CreateSession(ctx context.Context, p CreateSessionParams) (Session, error)
	// GetSession returns one session, ErrNotFound when there is none.
	GetSession(ctx context.Context, p GetSessionParams) (Session, error)
	// ListSessions returns the sessions of a task, oldest first.
	ListSessions(ctx context.Context, p ListSessionsParams) ([]Session, error)
	// UpdateSession sets the non-nil fields and adds the usage deltas.
	UpdateSession(ctx context.Context, p UpdateSessionParams) (Session, error)

	// AppendTurns appends a batch of turns atomically. Seqs must continue the
	// session gaplessly (the first is Session.LastSeq+1, then +1 each). A seq
	// that exists already is ErrConflict and nothing is written; a gap is
	// *InvalidError; an unknown session is ErrNotFound. The usage deltas in p
	// are added to the session in the same transaction.
	AppendTurns(ctx context.Context, p AppendTurnsParams) ([]Turn, error)
	// LoadTurns returns the turns of a session with Seq > p.AfterSeq in seq
	// order, at most p.Limit (0: all). An unknown session is ErrNotFound.
	LoadTurns(ctx context.Context, p LoadTurnsParams) ([]Turn, error)

	// PutToolOutput stores the full output of one tool call; a second put for
	// the same session and call id replaces it (tools run at least once).
	PutToolOutput(ctx context.Context, p PutToolOutputParams) (ToolOutput, error)
	// GetToolOutput returns one tool output, ErrNotFound when there is none.
	GetToolOutput(ctx context.Context, p GetToolOutputParams) (ToolOutput, error)

	// PutArtifact stores an artifact of a task; the same task, kind and name
	// again replaces it.
	PutArtifact(ctx context.Context, p PutArtifactParams) (Artifact, error)
	// GetArtifact returns one artifact with its content.
	GetArtifact(ctx context.Context, p GetArtifactParams) (Artifact, error)
	// ListArtifacts returns the artifacts of a task without their content.
	ListArtifacts(ctx context.Context, p ListArtifactsParams) ([]Artifact, error)
	// LatestArtifact returns the newest artifact of a kind and name of any
	// task, with its content (a repository's notes, kept by the tasks that
	// worked on it), or ErrNotFound.
	LatestArtifact(ctx context.Context, p LatestArtifactParams) (Artifact, error)

	// Usage sums the usage and cost of the sessions p selects, one row per
	// group in ascending key order (no rows when nothing matches).
	Usage(ctx context.Context, p UsageParams) ([]UsageRow, error)
	// ReportTasks returns the root tasks p selects, oldest first, each with
	// the sums over the sessions of its whole tree (backlog reports).
	ReportTasks(ctx context.Context, p ReportTasksParams) (ReportTasksResult, error)

	// Principals holds API tokens and the audit log.
	Principals

	// Schedules holds cron schedules (schedules.go).
	Schedules
	// DelayedStarts holds the start times of tasks submitted with run_at
	// (delayed.go).
	DelayedStarts

	// Ping checks that the backend answers (for readiness probes).
	Ping(ctx context.Context) error
	// Close releases the connections. Safe to call twice.
	Close() error
}

// Task is one unit of work: a root task submitted by a user or a child task
// spawned by a session.
type Task struct {
	ID             uuid.UUID
	ParentID       uuid.UUID // uuid.Nil for a root task
	RootID         uuid.UUID // the task itself for a root task
	Depth          int       // 0 for a root task
	State          TaskState
	Queue          string
	Priority       int // higher runs first
	Spec           json.RawMessage
	Result         json.RawMessage // nil until set; cleared when the task is reopened
	Error          string          // reason of a failure or cancellation, e.g. "dead_letter"; cleared on reopen
	Attempts       int             // claims so far
	WorkerID       string          // worker of the last claim
	IdempotencyKey string          // "" when none
	Labels         map[string]string
	WaitingFor     json.RawMessage // what a waiting task waits for; nil otherwise
	CreatedAt      time.Time
	UpdatedAt      time.Time
	StartedAt      time.Time // zero until the first claim
	HeartbeatAt    time.Time // zero unless running
	FinishedAt     time.Time // zero unless terminal (a reopen clears it)
	// Tenant is the team the task belongs to; SubmittedBy the principal
	// that submitted its root. A child always has its parent's.
	Tenant      string
	SubmittedBy string
}

// CreateTaskParams describes a new task.
type CreateTaskParams struct {
	ID             uuid.UUID // optional; a UUIDv7 is generated when Nil
	ParentID       uuid.UUID // optional
	Queue          string    // default "default"
	Priority       int
	Spec           json.RawMessage // required, valid JSON
	IdempotencyKey string          // optional, unique across tasks
	Labels         map[string]string
	// Tenant (default "default") and SubmittedBy (the principal's ID);
	// with a ParentID both are the parent's, whatever is given here.
	Tenant      string
	SubmittedBy string
}

// CreateTaskResult is the created task, or the existing one for a repeated
// idempotency key.
type CreateTaskResult struct {
	Task     Task
	Existing bool // true when IdempotencyKey matched a task created earlier
}

// CreateTasksParams is a batch of tasks.
type CreateTasksParams struct {
	Tasks []CreateTaskParams
}

// GetTaskParams names a task.
type GetTaskParams struct {
	ID uuid.UUID
}

// ClaimTaskParams describes a claim by a worker. The claim is refused
// (ErrConflict) when the task's direct parent is cancelled, from any state.
type ClaimTaskParams struct {
	ID       uuid.UUID
	WorkerID string      // required
	From     []TaskState // states claimable from; default {queued}; queued and waiting allowed
	// StaleBefore, when non-zero, also allows taking over a running task whose
	// heartbeat is older than it (its worker died; the message was redelivered).
	StaleBefore time.Time
}

// HeartbeatTaskParams describes a heartbeat.
type HeartbeatTaskParams struct {
	ID       uuid.UUID
	WorkerID string // required: the owner
}

// TransitionTaskParams describes a compare-and-set state change.
type TransitionTaskParams struct {
	ID       uuid.UUID
	From, To TaskState
	// WorkerID, when set and From is running, must be the task's worker.
	WorkerID string
	// Result is stored when non-nil (valid JSON).
	Result json.RawMessage
	// Error is stored when non-empty (the reason of a failure or cancellation).
	Error string
	// WaitingFor is stored when To is waiting (valid JSON, optional) and
	// cleared on any other transition.
	WaitingFor json.RawMessage
	// Append, when set, appends turns first, as AppendTurns would (fenced,
	// creating the session, ...), in the same write: a run's last turns and
	// its end cost one round trip. The transition happens only if the append
	// was written: a failed append writes nothing and returns its error. If
	// the append was written and the transition then does not match (the
	// task changed meanwhile), the turns stay and the error is the
	// transition's. Append's session must be task ID's.
	Append *AppendTurnsParams
}

// CancelSubtreeParams names the top of a subtree to cancel.
type CancelSubtreeParams struct {
	ID     uuid.UUID
	Reason string // stored as Task.Error; default "cancelled"
}

// CancelledTask is one task that CancelSubtree moved to cancelled.
type CancelledTask struct {
	ID       uuid.UUID
	From     TaskState // its state before: a running one must be aborted
	WorkerID string
}

// ListTasksParams filters and pages tasks. Zero fields do not filter.
type ListTasksParams struct {
	States          []TaskState
	Queue           string
	RootID          uuid.UUID
	ParentID        uuid.UUID
	Labels          map[string]string // tasks carrying all these labels
	CreatedAfter    time.Time         // inclusive
	CreatedBefore   time.Time         // exclusive
	HeartbeatBefore time.Time         // running tasks with an older heartbeat
	// Tenants, when not nil, keeps the tasks of these tenants only (an
	// empty non-nil slice matches nothing).
	Tenants []string
	// Query, when not blank, keeps the tasks whose prompt, final answer or
	// failure reason match it as a text search (at most MaxQueryLen
	// bytes): words are all required, "a phrase" is matched as one, -word
	// excludes and "or" between words takes either. Postgres uses its
	// full-text search (english), SQLite FTS5 (porter): both stem words.
	// Matches keep the list's order (newest first), so cursors page them.
	Query  string
	Limit  int    // default 100, at most 1000
	Cursor string // from TaskPage.NextCursor; "" for the first page
}

// MaxQueryLen bounds ListTasksParams.Query.
const MaxQueryLen = 500

// TaskPage is one page of ListTasks.
type TaskPage struct {
	Tasks      []Task
	NextCursor string // "" when this is the last page
}

// TaskTreeParams names the root of a tree.
type TaskTreeParams struct {
	RootID uuid.UUID
	Limit  int // default 10000
}

// ChildrenParams names a parent task.
type ChildrenParams struct {
	ParentID uuid.UUID
}

// ChildrenResult lists the children of a task, oldest first.
type ChildrenResult struct {
	Children []Task
}

// AllTerminal reports whether every child has finished (true with no child).
func (r ChildrenResult) AllTerminal() bool {
	for _, c := range r.Children {
		if !c.State.Terminal() {
			return false
		}
	}
	return true
}

// CountTasksParams filters the tasks to count. Zero fields do not filter.
type CountTasksParams struct {
	Tenants       []string // as in ListTasksParams
	Queue         string
	RootID        uuid.UUID
	Labels        map[string]string
	CreatedAfter  time.Time
	CreatedBefore time.Time
}

// Usage counts tokens. It is the store's own type so that the store stays a
// leaf package; the fleet converts from llm.Usage.
type Usage struct {
	InputTokens      int64 `json:"input_tokens"`
	OutputTokens     int64 `json:"output_tokens"`
	ReasoningTokens  int64 `json:"reasoning_tokens"`
	CacheReadTokens  int64 `json:"cache_read_tokens"`
	CacheWriteTokens int64 `json:"cache_write_tokens"`
}

// Add returns u plus d.
func (u Usage) Add(d Usage) Usage {
	return Usage{
		InputTokens:      u.InputTokens + d.InputTokens,
		OutputTokens:     u.OutputTokens + d.OutputTokens,
		ReasoningTokens:  u.ReasoningTokens + d.ReasoningTokens,
		CacheReadTokens:  u.CacheReadTokens + d.CacheReadTokens,
		CacheWriteTokens: u.CacheWriteTokens + d.CacheWriteTokens,
	}
}

// Session is one agent session run for a task.
type Session struct {
	ID        uuid.UUID
	TaskID    uuid.UUID
	Profile   string
	Provider  string
	Model     string
	State     string // the agent's session state; the store does not interpret it
	Config    json.RawMessage
	LastSeq   int64 // seq of the last appended turn, 0 before the first
	Usage     Usage
	CostUSD   float64
	CreatedAt time.Time
	UpdatedAt time.Time
}

// CreateSessionParams describes a new session.
type CreateSessionParams struct {
	ID       uuid.UUID // optional; generated when Nil
	TaskID   uuid.UUID // required, an existing task
	Profile  string
	Provider string
	Model    string
	State    string          // default "idle"
	Config   json.RawMessage // optional, valid JSON
}

// GetSessionParams names a session.
type GetSessionParams struct {
	ID uuid.UUID
}

// ListSessionsParams names a task.
type ListSessionsParams struct {
	TaskID uuid.UUID
}

// UpdateSessionParams changes a session. Nil pointers leave a field as is;
// the deltas are added to the totals.
type UpdateSessionParams struct {
	ID         uuid.UUID
	State      *string
	Provider   *string
	Model      *string
	Config     json.RawMessage // replaced when non-nil
	AddUsage   Usage
	AddCostUSD float64
}

// Turn is one entry of a session's append-only history.
type Turn struct {
	SessionID uuid.UUID
	Seq       int64  // gapless from 1 per session
	Kind      string // defined by the agent: "user", "assistant", "tool_results", ...
	Payload   json.RawMessage
	Usage     json.RawMessage // nil when absent
	CreatedAt time.Time
}

// NewTurn is a turn to append.
type NewTurn struct {
	Seq     int64
	Kind    string          // required
	Payload json.RawMessage // required, valid JSON
	Usage   json.RawMessage // optional, valid JSON
}

// AppendTurnsParams is a batch of turns for one session.
type AppendTurnsParams struct {
	SessionID  uuid.UUID
	Turns      []NewTurn // at least one, seqs consecutive
	AddUsage   Usage     // added to the session totals with the turns
	AddCostUSD float64
	// OwnerWorkerID, when set, fences the append: it is written only while
	// the session's task is running on this worker, else nothing is written
	// and the error is a *NotOwnerError (ErrConflict). A worker whose task
	// was cancelled or taken over learns it at its next turn.
	OwnerWorkerID string
	// CreateSession, when set, creates the session in the same transaction
	// (as CreateSession would, with SessionID as its id): a session's first
	// write can carry its first turns, which then start at seq 1. A session
	// that exists already is ErrConflict and nothing is written. The fence
	// applies to CreateSession.TaskID.
	CreateSession *CreateSessionParams
}

// LoadTurnsParams selects turns of a session.
type LoadTurnsParams struct {
	SessionID uuid.UUID
	AfterSeq  int64
	Limit     int // 0: all
}

// ToolOutput is the full, untruncated output of one tool call.
type ToolOutput struct {
	SessionID uuid.UUID
	CallID    string
	Tool      string
	Output    string
	IsError   bool
	Size      int64 // bytes of Output
	CreatedAt time.Time
}

// PutToolOutputParams describes a tool output to store.
type PutToolOutputParams struct {
	SessionID uuid.UUID // required, an existing session
	CallID    string    // required
	Tool      string    // required
	Output    string
	IsError   bool
}

// GetToolOutputParams names a tool output.
type GetToolOutputParams struct {
	SessionID uuid.UUID
	CallID    string
}

// Artifact is a named blob produced by a task, such as its workspace diff.
type Artifact struct {
	TaskID      uuid.UUID
	Kind        string // "diff", ...
	Name        string // "" for the single artifact of a kind
	ContentType string
	Content     []byte // nil in ListArtifacts
	Size        int64
	CreatedAt   time.Time
}

// PutArtifactParams describes an artifact to store.
type PutArtifactParams struct {
	TaskID      uuid.UUID // required, an existing task
	Kind        string    // required
	Name        string
	ContentType string // default "application/octet-stream"
	Content     []byte
}

// GetArtifactParams names an artifact.
type GetArtifactParams struct {
	TaskID uuid.UUID
	Kind   string
	Name   string
}

// ListArtifactsParams names a task.
type ListArtifactsParams struct {
	TaskID uuid.UUID
}

// LatestArtifactParams names an artifact of any task.
type LatestArtifactParams struct {
	Kind string // required
	Name string
}
