package store

import "time"

// UsageGroup says how Store.Usage groups sessions.
type UsageGroup string

// The groupings of Store.Usage. A session counts on the day (UTC) it was
// created; its usage and cost are its totals so far.
const (
	GroupTotal   UsageGroup = ""        // one row, Key ""
	GroupLabel   UsageGroup = "label"   // Key is the task's value of UsageParams.LabelKey ("" without it)
	GroupProfile UsageGroup = "profile" // Key is the session's profile
	GroupModel   UsageGroup = "model"   // Key is the session's model
	GroupDay     UsageGroup = "day"     // Key is the session's creation date, YYYY-MM-DD (UTC)
)

// UsageParams selects and groups the sessions Store.Usage sums. Zero
// fields do not filter.
type UsageParams struct {
	GroupBy  UsageGroup
	LabelKey string            // required with GroupLabel
	Labels   map[string]string // sessions of tasks carrying all these labels
	Tenants  []string          // sessions of tasks of these tenants; nil: all, empty: none
	Since    time.Time         // sessions created at or after (inclusive)
	Until    time.Time         // sessions created before (exclusive)
}

// UsageRow is the sum over one group's sessions.
type UsageRow struct {
	Key      string
	Tasks    int64 // distinct tasks with a session in the group
	Sessions int64
	Usage    Usage
	CostUSD  float64
}

// CheckUsageParams validates p; drivers call it first.
func CheckUsageParams(p UsageParams) error {
	switch p.GroupBy {
	case GroupTotal, GroupProfile, GroupModel, GroupDay:
	case GroupLabel:
		if p.LabelKey == "" {
			return invalidf("LabelKey", "is required to group by label: name the label key whose values are the groups")
		}
	default:
		return invalidf("GroupBy", "%q is not one of label, profile, model, day", p.GroupBy)
	}
	if !p.Since.IsZero() && !p.Until.IsZero() && !p.Since.Before(p.Until) {
		return invalidf("Since", "must be before Until")
	}
	return nil
}

// UsageRows is what a driver's query result gives ScanUsage (pgx.Rows and
// *sql.Rows both do).
type UsageRows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// ScanUsage reads the rows of a driver's usage query, whose columns are the
// key, the distinct tasks, the sessions, the five token sums and the cost.
func ScanUsage(rows UsageRows) ([]UsageRow, error) {
	var out []UsageRow
	for rows.Next() {
		var r UsageRow
		u := &r.Usage
		if err := rows.Scan(&r.Key, &r.Tasks, &r.Sessions, &u.InputTokens, &u.OutputTokens, &u.ReasoningTokens,
			&u.CacheReadTokens, &u.CacheWriteTokens, &r.CostUSD); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}
