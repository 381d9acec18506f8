package api

import (
	"time"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/store"
)

// Bulk actions (POST /v1/tasks/bulk).
const (
	BulkRetry  = "retry"
	BulkCancel = "cancel"
	// BulkPause holds the queued root tasks the filter selects, now and
	// later, until a BulkResume with the same filter.
	BulkPause  = "pause"
	BulkResume = "resume"
	// BulkSetPriority sets BulkRequest.Priority on the queued root tasks
	// the filter selects, moving each to the end of its new level.
	BulkSetPriority = "set_priority"
)

// BulkActions lists the actions POST /v1/tasks/bulk accepts.
var BulkActions = []string{BulkRetry, BulkCancel, BulkPause, BulkResume, BulkSetPriority}

// BulkFilter selects the tasks of a bulk action. Zero fields do not
// filter; at least one field must be set (an action on every task is
// refused as a likely mistake).
type BulkFilter struct {
	Tenant        string            `json:"tenant,omitempty"`
	Labels        map[string]string `json:"labels,omitempty"` // tasks carrying all these labels
	States        []store.TaskState `json:"states,omitempty"`
	Queue         string            `json:"queue,omitempty"`
	RootID        uuid.UUID         `json:"root_id,omitzero"`
	CreatedAfter  time.Time         `json:"created_after,omitzero"`  // inclusive
	CreatedBefore time.Time         `json:"created_before,omitzero"` // exclusive
	// Error keeps the tasks whose failure (or cancellation) reason
	// contains it, e.g. "dead_letter" or "budget".
	Error string `json:"error,omitempty"`
}

// IsZero reports whether f selects every task.
func (f BulkFilter) IsZero() bool {
	return f.Tenant == "" && len(f.Labels) == 0 && len(f.States) == 0 && f.Queue == "" && f.RootID == uuid.Nil &&
		f.CreatedAfter.IsZero() && f.CreatedBefore.IsZero() && f.Error == ""
}

// BulkRequest is the body of POST /v1/tasks/bulk.
type BulkRequest struct {
	Action string     `json:"action"` // one of BulkActions
	Filter BulkFilter `json:"filter"`
	// DryRun answers the count and a sample (BulkPreview) and does
	// nothing.
	DryRun bool `json:"dry_run,omitempty"`
	// Reason is the cancellation reason (default "cancelled"), or a
	// pause's.
	Reason string `json:"reason,omitempty"`
	// Priority is set_priority's new priority (required there, refused
	// elsewhere), in the range of fleet.TaskSpec.Priority.
	Priority *int `json:"priority,omitempty"`
}

// BulkPreview answers a dry run: how many tasks the action would act
// on, and the first of them (newest first).
type BulkPreview struct {
	Action  string     `json:"action"`
	Matched int        `json:"matched"`
	Sample  []TaskView `json:"sample"`
}

// Bulk job states.
const (
	BulkRunning = "running"
	BulkDone    = "done"
	BulkFailed  = "failed" // stopped by an error (Error); the counts say how far it got
)

// BulkJob is the progress of a bulk action (GET /v1/bulk/{id}).
type BulkJob struct {
	ID        uuid.UUID  `json:"id"`
	Action    string     `json:"action"`
	Filter    BulkFilter `json:"filter"`
	State     string     `json:"state"` // BulkRunning, BulkDone or BulkFailed
	Principal string     `json:"principal"`
	// Matched counts the tasks the action applies to so far; Done those
	// acted on; Created the new attempts a retry made, Existing the
	// attempts an earlier retry had made already (idempotent), Cancelled
	// the tasks a cancel ended (a subtree counts each), Skipped those
	// that needed nothing (finished meanwhile), Failed those whose action
	// failed (Errors holds the first few messages).
	Matched   int `json:"matched"`
	Done      int `json:"done"`
	Created   int `json:"created"`
	Existing  int `json:"existing"`
	Cancelled int `json:"cancelled"`
	Skipped   int `json:"skipped"`
	Failed    int `json:"failed"`
	// Paused counts the queued tasks a pause held when it was made (it
	// holds later ones too), Resumed those a resume lets start; PauseID
	// names the pause (GET /v1/pauses).
	Paused  int    `json:"paused,omitempty"`
	Resumed int    `json:"resumed,omitempty"`
	PauseID string `json:"pause_id,omitempty"`
	// Moved counts the tasks set_priority moved to another level (a new
	// start message there); the others already had the priority.
	Moved     int       `json:"moved,omitempty"`
	Errors    []string  `json:"errors,omitempty"`
	Error     string    `json:"error,omitempty"`
	StartedAt time.Time `json:"started_at"`
	EndedAt   time.Time `json:"ended_at,omitzero"`
}

// RetentionPolicy is how long the history of a task is kept after it
// ends, per kind of row; 0 means kept for ever.
type RetentionPolicy struct {
	Turns       fleet.Duration `json:"turns"`
	ToolOutputs fleet.Duration `json:"tool_outputs"`
	Artifacts   fleet.Duration `json:"artifacts"`
	// Events is how long a tree's events stay after its root ended; zero
	// or less: the EVENTS stream's max age.
	Events fleet.Duration `json:"events"`
	// Audit is how long the tenant's audit log entries are kept after
	// they were written; zero or less: for ever.
	Audit fleet.Duration `json:"audit"`
}

// RetentionView answers GET /v1/retention: the default policy, the
// policies of the tenants the caller sees, the floor and what was
// deleted since the dispatcher started.
type RetentionView struct {
	Default  RetentionPolicy            `json:"default"`
	Tenants  map[string]RetentionPolicy `json:"tenants,omitempty"`
	Floor    fleet.Duration             `json:"floor"`
	Interval fleet.Duration             `json:"interval"`
	Events   string                     `json:"events"`
	Deleted  map[string]int64           `json:"deleted"`
}

// PauseView is one pause in force (GET /v1/pauses): a whole queue
// (Queue), or the tasks a filter selects within some tenants (Filter,
// Tenants; none: every tenant).
type PauseView struct {
	ID      string      `json:"id"`
	Queue   string      `json:"queue,omitempty"`
	Filter  *BulkFilter `json:"filter,omitempty"`
	Tenants []string    `json:"tenants,omitempty"`
	By      string      `json:"by"`
	At      time.Time   `json:"at"`
	Reason  string      `json:"reason,omitempty"`
}

// PausesView answers GET /v1/pauses: the pauses in force and how many
// tasks workers hold for them.
type PausesView struct {
	Pauses []PauseView `json:"pauses"`
	Held   int         `json:"held"`
}

// PauseQueueRequest is the optional body of POST /v1/queues/{queue}/pause.
type PauseQueueRequest struct {
	Reason string `json:"reason,omitempty"`
}
