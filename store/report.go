package store

import "time"

// Report limits: ReportTasks returns at most MaxReportTasks tasks.
const (
	DefaultReportTasks = 10000
	MaxReportTasks     = 50000
)

// ReportTasksParams selects the root tasks of a backlog report. Zero
// fields do not filter.
type ReportTasksParams struct {
	Labels        map[string]string // tasks carrying all these labels
	Tenants       []string          // as in ListTasksParams: nil all, empty none
	CreatedAfter  time.Time         // inclusive
	CreatedBefore time.Time         // exclusive
	Limit         int               // default DefaultReportTasks, at most MaxReportTasks
}

// ReportTask is one root task with the sums over the sessions of its
// whole tree (its own and its subagents'): what the task cost.
type ReportTask struct {
	Task     Task
	Sessions int64
	Usage    Usage
	CostUSD  float64
}

// ReportTasksResult is what ReportTasks found, oldest first.
type ReportTasksResult struct {
	Tasks     []ReportTask
	Truncated bool // more tasks matched than the limit
}

// PrepareReportTasks validates p and fills its default limit; drivers
// call it first.
func PrepareReportTasks(p ReportTasksParams) (ReportTasksParams, error) {
	switch {
	case p.Limit == 0:
		p.Limit = DefaultReportTasks
	case p.Limit < 0 || p.Limit > MaxReportTasks:
		return p, invalidf("Limit", "must be between 1 and %d, got %d", MaxReportTasks, p.Limit)
	}
	if !p.CreatedAfter.IsZero() && !p.CreatedBefore.IsZero() && !p.CreatedAfter.Before(p.CreatedBefore) {
		return p, invalidf("CreatedAfter", "must be before CreatedBefore")
	}
	return p, nil
}

// JoinTreeUsage reads a driver's per-root session sums (columns: the root
// id as text, the sessions, the five token sums, the cost) into the tasks
// (the rest keep zero sums) and cuts them to limit.
func JoinTreeUsage(tasks []Task, limit int, rows UsageRows) (ReportTasksResult, error) {
	res := ReportTasksResult{}
	if len(tasks) > limit {
		tasks, res.Truncated = tasks[:limit], true
	}
	index := make(map[string]int, len(tasks))
	res.Tasks = make([]ReportTask, len(tasks))
	for i, t := range tasks {
		res.Tasks[i].Task = t
		index[t.ID.String()] = i
	}
	for rows.Next() {
		var id string
		var r ReportTask
		u := &r.Usage
		if err := rows.Scan(&id, &r.Sessions, &u.InputTokens, &u.OutputTokens, &u.ReasoningTokens,
			&u.CacheReadTokens, &u.CacheWriteTokens, &r.CostUSD); err != nil {
			return res, err
		}
		if i, ok := index[id]; ok {
			r.Task = res.Tasks[i].Task
			res.Tasks[i] = r
		}
	}
	return res, rows.Err()
}
