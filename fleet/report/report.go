package report

import (
	"cmp"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/api"
	"github.com/agentfleet/agentfleet/store"
)

// Report sizes.
const (
	BurnDownPoints  = 24 // instants of the burn-down
	TopFailureCount = 5  // reasons in TopFailures
	ExamplesPerCase = 3  // example tasks per reason
)

// NoChecks is the outcome detail of a success without a checks verdict.
const NoChecks = "no checks"

// Build computes the report of the tasks res holds (oldest first, as
// store.ReportTasks returns them), selected by filter, at now.
func Build(filter map[string]string, res store.ReportTasksResult, now time.Time) api.Report {
	if filter == nil {
		filter = map[string]string{}
	}
	rep := api.Report{Filter: filter, Tasks: len(res.Tasks), Truncated: res.Truncated,
		Outcomes: []api.OutcomeRow{}, TopFailures: []api.FailureReason{}, BurnDown: []api.BurnDownPoint{}}
	outcomes := map[[2]string]int{}
	var ttr, turns []float64
	failures := map[string]*api.FailureReason{}
	for _, rt := range res.Tasks {
		t := rt.Task
		rep.CostUSD += rt.CostUSD
		rep.Usage = rep.Usage.Add(rt.Usage)
		count(&rep.Now, t, now)
		if !t.State.Terminal() {
			continue
		}
		rep.Finished++
		if !t.FinishedAt.IsZero() {
			ttr = append(ttr, t.FinishedAt.Sub(t.CreatedAt).Seconds())
		}
		result, ok := fleet.DecodeResult(t.Result)
		if ok {
			turns = append(turns, float64(result.TurnsUsed))
		}
		if t.State == store.TaskSucceeded {
			rep.Succeeded++
			outcomes[[2]string{"succeeded", verdict(result)}]++
			continue
		}
		reason := failReason(t)
		outcomes[[2]string{"failed", reason}]++
		f := failures[reason]
		if f == nil {
			f = &api.FailureReason{Reason: reason, Examples: []string{}}
			failures[reason] = f
		}
		f.Tasks++
		if len(f.Examples) < ExamplesPerCase {
			f.Examples = append(f.Examples, t.ID.String())
		}
	}
	rep.Outcomes = outcomeRows(outcomes)
	rep.TopFailures = topFailures(failures)
	rep.BurnDown = burnDown(res.Tasks, now)
	rep.TimeToResult = percentiles(ttr)
	rep.MedianTurns = median(turns)
	if rep.Finished > 0 {
		rep.SuccessRate = float64(rep.Succeeded) / float64(rep.Finished)
		lo, hi := Wilson(rep.Succeeded, rep.Finished, 1.96)
		rep.SuccessInterval = [2]float64{lo, hi}
	}
	if rep.Succeeded > 0 {
		rep.CostPerSuccessUSD = rep.CostUSD / float64(rep.Succeeded)
		rep.TokensPerSuccess = float64(rep.Usage.InputTokens+rep.Usage.OutputTokens) / float64(rep.Succeeded)
	}
	return rep
}

// Wilson returns the Wilson score interval of k successes in n trials at
// z standard deviations (1.96 for 95%); (0, 0) when n is 0.
func Wilson(k, n int, z float64) (lo, hi float64) {
	if n <= 0 {
		return 0, 0
	}
	nf, p := float64(n), float64(k)/float64(n)
	z2 := z * z
	centre := p + z2/(2*nf)
	spread := z * math.Sqrt(p*(1-p)/nf+z2/(4*nf*nf))
	den := 1 + z2/nf
	return math.Max(0, (centre-spread)/den), math.Min(1, (centre+spread)/den)
}

// count adds t, as it is at instant at, to c.
func count(c *api.ReportCounts, t store.Task, at time.Time) {
	switch {
	case t.CreatedAt.After(at):
	case t.State.Terminal() && (t.FinishedAt.IsZero() || !t.FinishedAt.After(at)): // no end time: ended already
		if t.State == store.TaskSucceeded {
			c.Succeeded++
		} else {
			c.Failed++
		}
	case !t.StartedAt.IsZero() && !t.StartedAt.After(at):
		c.Running++
	default:
		c.Queued++
	}
}

func burnDown(tasks []store.ReportTask, now time.Time) []api.BurnDownPoint {
	if len(tasks) == 0 {
		return []api.BurnDownPoint{}
	}
	start, end := tasks[0].Task.CreatedAt, time.Time{}
	for _, rt := range tasks {
		t := rt.Task
		if !t.State.Terminal() || t.FinishedAt.IsZero() {
			end = now
			break
		}
		end = maxTime(end, t.FinishedAt)
	}
	end = maxTime(end, start)
	points := make([]api.BurnDownPoint, BurnDownPoints)
	step := end.Sub(start) / time.Duration(BurnDownPoints-1)
	for i := range points {
		at := start.Add(step * time.Duration(i))
		if i == BurnDownPoints-1 {
			at = end
		}
		points[i].At = at.UTC()
		for _, rt := range tasks {
			count(&points[i].ReportCounts, rt.Task, at)
		}
	}
	return points
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func verdict(r fleet.TaskResult) string {
	if r.Checks == nil || r.Checks.Verdict == "" {
		return NoChecks
	}
	return r.Checks.Verdict
}

func failReason(t store.Task) string {
	if t.Error != "" {
		return t.Error
	}
	return string(t.State)
}

// outcomeRows orders the outcome table: successes first, then by count
// (descending) and detail.
func outcomeRows(m map[[2]string]int) []api.OutcomeRow {
	rows := make([]api.OutcomeRow, 0, len(m))
	for k, n := range m {
		rows = append(rows, api.OutcomeRow{Outcome: k[0], Detail: k[1], Tasks: n})
	}
	slices.SortFunc(rows, func(a, b api.OutcomeRow) int {
		return cmp.Or(-cmp.Compare(a.Outcome, b.Outcome), cmp.Compare(b.Tasks, a.Tasks), cmp.Compare(a.Detail, b.Detail))
	})
	return rows
}

func topFailures(m map[string]*api.FailureReason) []api.FailureReason {
	out := make([]api.FailureReason, 0, len(m))
	for _, f := range m {
		out = append(out, *f)
	}
	slices.SortFunc(out, func(a, b api.FailureReason) int {
		return cmp.Or(cmp.Compare(b.Tasks, a.Tasks), cmp.Compare(a.Reason, b.Reason))
	})
	return out[:min(len(out), TopFailureCount)]
}

// percentiles uses the nearest rank: the value at ceil(p*n) in order.
func percentiles(xs []float64) api.Percentiles {
	if len(xs) == 0 {
		return api.Percentiles{}
	}
	slices.Sort(xs)
	rank := func(p float64) float64 {
		i := int(math.Ceil(p*float64(len(xs)))) - 1
		return xs[max(0, min(i, len(xs)-1))]
	}
	return api.Percentiles{N: len(xs), P50: rank(0.5), P90: rank(0.9), P99: rank(0.99), Max: xs[len(xs)-1]}
}

// median is the middle value, the mean of the two middle ones for an
// even count; 0 for none.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	slices.Sort(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

// CompareFilter is the second filter of a comparison: base with over's
// labels put over it.
func CompareFilter(base, over map[string]string) map[string]string {
	out := make(map[string]string, len(base)+len(over))
	maps.Copy(out, base)
	maps.Copy(out, over)
	return out
}
