package api

import (
	"encoding/json"
	"time"

	"github.com/agentfleet/agentfleet/store"
)

// Reports is the body of GET /v1/reports: the report of a filter and,
// with compare, the report of the second filter side by side.
type Reports struct {
	Report  Report  `json:"report"`
	Compare *Report `json:"compare,omitempty"`
}

// Report is a backlog report: the root tasks of one filter (see
// fleet/report for how each number is computed).
type Report struct {
	Filter    map[string]string `json:"filter"` // the labels every task carries
	Tasks     int               `json:"tasks"`
	Truncated bool              `json:"truncated,omitempty"` // more tasks matched than a report reads
	Now       ReportCounts      `json:"now"`
	BurnDown  []BurnDownPoint   `json:"burn_down"`
	Outcomes  []OutcomeRow      `json:"outcomes"`
	// Finished counts the terminal tasks, Succeeded those that succeeded;
	// SuccessRate is their ratio and SuccessInterval its 95% Wilson score
	// interval (0, 0 without a finished task).
	Finished        int        `json:"finished"`
	Succeeded       int        `json:"succeeded"`
	SuccessRate     float64    `json:"success_rate"`
	SuccessInterval [2]float64 `json:"success_interval"`
	// CostUSD and Usage are the sums over every task's tree; the per
	// success figures divide them by Succeeded (0 without a success).
	CostUSD           float64     `json:"cost_usd"`
	Usage             store.Usage `json:"usage"`
	CostPerSuccessUSD float64     `json:"cost_per_success_usd"`
	TokensPerSuccess  float64     `json:"tokens_per_success"`
	// TimeToResult are the percentiles of finished-minus-created over the
	// finished tasks, in seconds.
	TimeToResult Percentiles `json:"time_to_result"`
	// MedianTurns is the median of the turns used by the finished tasks
	// that recorded a result.
	MedianTurns float64         `json:"median_turns"`
	TopFailures []FailureReason `json:"top_failures"`
}

// ReportCounts are tasks by the report's four states.
type ReportCounts struct {
	Queued    int `json:"queued"`
	Running   int `json:"running"` // waiting (parked) tasks count as running
	Succeeded int `json:"succeeded"`
	Failed    int `json:"failed"` // cancelled tasks count as failed
}

// BurnDownPoint is the counts at one instant.
type BurnDownPoint struct {
	At time.Time `json:"at"`
	ReportCounts
}

// OutcomeRow is one line of the outcome table: succeeded by checks
// verdict, or failed by reason.
type OutcomeRow struct {
	Outcome string `json:"outcome"` // "succeeded" or "failed"
	Detail  string `json:"detail"`  // a checks verdict ("fixed", "passed", ..., "no checks") or a failure reason
	Tasks   int    `json:"tasks"`
}

// Percentiles of a duration sample, in seconds (all 0 when N is 0).
type Percentiles struct {
	N   int     `json:"n"`
	P50 float64 `json:"p50"`
	P90 float64 `json:"p90"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
}

// FailureReason is one reason of failure with a few of its tasks.
type FailureReason struct {
	Reason   string   `json:"reason"`
	Tasks    int      `json:"tasks"`
	Examples []string `json:"examples"` // task ids, the oldest first
}

// ExportRecord is one line of GET /v1/reports/export: a finished root
// task's result, for offline evaluation.
type ExportRecord struct {
	TaskID      string            `json:"task_id"`
	State       string            `json:"state"`
	Reason      string            `json:"reason,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Prompt      string            `json:"prompt"`
	CreatedAt   time.Time         `json:"created_at"`
	FinishedAt  time.Time         `json:"finished_at"`
	FinalAnswer string            `json:"final_answer"`
	Structured  json.RawMessage   `json:"structured,omitempty"`
	Checks      json.RawMessage   `json:"checks,omitempty"`
	PullRequest string            `json:"pull_request,omitempty"`
	Diff        string            `json:"diff,omitempty"`
	CostUSD     float64           `json:"cost_usd"`
	Turns       int               `json:"turns"`
}
