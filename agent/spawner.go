package agent

import "context"

// Spawner runs a parent session's subagents. The in-process
// default runs child sessions in goroutines; the fleet supplies one that
// turns each child into a job any worker may run.
//
// Spawn returns at once with the child's id. Wait blocks until the child is
// done, or returns ErrParked to say "the child runs elsewhere: persist and
// suspend the parent" (see Park in doc.go). Implementations must be safe for
// concurrent use and should treat SpawnRequest.CallID as an idempotency key,
// because a resumed session re-runs calls whose results were not recorded.
type Spawner interface {
	Spawn(ctx context.Context, req SpawnRequest) (SubagentStatus, error)
	SendInput(ctx context.Context, agentID, message string) error
	Wait(ctx context.Context, agentID string) (SubagentResult, error)
	Close(ctx context.Context, agentID string) (SubagentStatus, error)
	// CloseAll ends every live child; the parent calls it when it closes.
	CloseAll(ctx context.Context)
}

// SpawnRequest describes a child to start.
type SpawnRequest struct {
	CallID     string `json:"call_id"`   // the spawn_agent call: an idempotency key
	ParentID   string `json:"parent_id"` // the parent session
	Depth      int    `json:"depth"`     // the child's depth (parent's + 1)
	Task       string `json:"task"`
	WorkingDir string `json:"working_dir,omitempty"` // subdirectory of the parent's working dir
	Model      string `json:"model,omitempty"`       // "" = the parent's current model
	MaxTurns   int    `json:"max_turns,omitempty"`   // 0 = unlimited
	// ReadOnly asks for a child that only reads: its permissions are its
	// parent's narrowed to mode plan (permission.ReadOnly), which refuses
	// every edit, write, shell command and other tool that changes state,
	// and it works in the parent's files (no copy of its own).
	ReadOnly bool `json:"read_only,omitempty"`
}

// SubagentStatus is where a child is.
type SubagentStatus struct {
	AgentID string `json:"agent_id"`
	Status  string `json:"status"` // running, completed, failed, closed
}

// Subagent statuses.
const (
	SubagentRunning   = "running"
	SubagentCompleted = "completed"
	SubagentFailed    = "failed"
	SubagentClosed    = "closed"
)

// SubagentResult is what wait returns to the parent model.
type SubagentResult struct {
	AgentID   string `json:"agent_id"`
	Status    string `json:"status"`
	Output    string `json:"output"`
	Success   bool   `json:"success"`
	TurnsUsed int    `json:"turns_used"`
}
