package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/agentfleet/agentfleet/fleet/api"
)

// The formats of the report's numbers; the dashboard (fleet/dashboard,
// report.js) formats them the same way, so both read alike.
// fixed rounds half away from zero, as JavaScript's toFixed does for
// the positive numbers of a report.
func fixed(x float64, digits int) string {
	p := math.Pow10(digits)
	return strconv.FormatFloat(math.Round(x*p)/p, 'f', digits, 64)
}

func pct(x float64) string  { return fixed(x*100, 1) + "%" }
func usd(x float64) string  { return "$" + fixed(x, 4) }
func secs(x float64) string { return fixed(x, 1) + "s" }

// FilterName is a filter as text: its labels sorted, "all tasks" for none.
func FilterName(f map[string]string) string {
	if len(f) == 0 {
		return "all tasks"
	}
	parts := make([]string, 0, len(f))
	for k, v := range f {
		parts = append(parts, k+"="+v)
	}
	slices.Sort(parts)
	return strings.Join(parts, ", ")
}

// Metric is one line of the summary table.
type Metric struct {
	Name  string
	Value func(api.Report) string
}

// Metrics are the lines of the summary (and comparison) table.
var Metrics = []Metric{
	{"Tasks", func(r api.Report) string { return strconv.Itoa(r.Tasks) }},
	{"Queued / running / succeeded / failed", func(r api.Report) string {
		return fmt.Sprintf("%d / %d / %d / %d", r.Now.Queued, r.Now.Running, r.Now.Succeeded, r.Now.Failed)
	}},
	{"Success rate (95% Wilson interval)", func(r api.Report) string {
		if r.Finished == 0 {
			return "-"
		}
		return fmt.Sprintf("%s [%s, %s]", pct(r.SuccessRate), pct(r.SuccessInterval[0]), pct(r.SuccessInterval[1]))
	}},
	{"Cost", func(r api.Report) string { return usd(r.CostUSD) }},
	{"Cost per success", func(r api.Report) string { return usd(r.CostPerSuccessUSD) }},
	{"Tokens per success", func(r api.Report) string { return fixed(r.TokensPerSuccess, 0) }},
	{"Median turns", func(r api.Report) string { return fixed(r.MedianTurns, 1) }},
	{"Time to result p50 / p90 / p99", func(r api.Report) string {
		p := r.TimeToResult
		return secs(p.P50) + " / " + secs(p.P90) + " / " + secs(p.P99)
	}},
}

func reports(rs api.Reports) []api.Report {
	out := []api.Report{rs.Report}
	if rs.Compare != nil {
		out = append(out, *rs.Compare)
	}
	return out
}

// Markdown renders rs: the summary table (one column per filter), then
// per filter the outcome table, the top failure reasons and the burn-down.
func Markdown(w io.Writer, rs api.Reports) error {
	all := reports(rs)
	var b strings.Builder
	b.WriteString("# Backlog report\n\n|  |")
	for _, r := range all {
		b.WriteString(" " + FilterName(r.Filter) + " |")
	}
	b.WriteString("\n|---|" + strings.Repeat("---|", len(all)) + "\n")
	for _, m := range Metrics {
		b.WriteString("| " + m.Name + " |")
		for _, r := range all {
			b.WriteString(" " + m.Value(r) + " |")
		}
		b.WriteString("\n")
	}
	for _, r := range all {
		name := FilterName(r.Filter)
		if r.Truncated {
			fmt.Fprintf(&b, "\nNote: %s matched more tasks than a report reads; the oldest are counted.\n", name)
		}
		fmt.Fprintf(&b, "\n## Outcomes: %s\n\n| Outcome | Detail | Tasks |\n|---|---|---|\n", name)
		for _, o := range r.Outcomes {
			fmt.Fprintf(&b, "| %s | %s | %d |\n", o.Outcome, o.Detail, o.Tasks)
		}
		fmt.Fprintf(&b, "\n## Top failure reasons: %s\n\n| Reason | Tasks | Examples |\n|---|---|---|\n", name)
		for _, f := range r.TopFailures {
			fmt.Fprintf(&b, "| %s | %d | %s |\n", f.Reason, f.Tasks, strings.Join(f.Examples, " "))
		}
		fmt.Fprintf(&b, "\n## Burn-down: %s\n\n| At | Queued | Running | Succeeded | Failed |\n|---|---|---|---|---|\n", name)
		for _, p := range r.BurnDown {
			fmt.Fprintf(&b, "| %s | %d | %d | %d | %d |\n", p.At.Format("2006-01-02T15:04:05.000Z"), p.Queued, p.Running, p.Succeeded, p.Failed)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// CSVHeader is the header of CSV.
var CSVHeader = []string{"filter", "tasks", "queued", "running", "succeeded", "failed", "finished",
	"success_rate", "success_low", "success_high", "cost_usd", "cost_per_success_usd", "tokens_per_success",
	"median_turns", "time_to_result_p50_s", "time_to_result_p90_s", "time_to_result_p99_s"}

// CSV renders the figures of rs for scripts: CSVHeader, then one row per
// filter, numbers unformatted.
func CSV(w io.Writer, rs api.Reports) error {
	cw := csv.NewWriter(w)
	_ = cw.Write(CSVHeader)
	f := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	for _, r := range reports(rs) {
		_ = cw.Write([]string{FilterName(r.Filter), strconv.Itoa(r.Tasks), strconv.Itoa(r.Now.Queued),
			strconv.Itoa(r.Now.Running), strconv.Itoa(r.Now.Succeeded), strconv.Itoa(r.Now.Failed),
			strconv.Itoa(r.Finished), f(r.SuccessRate), f(r.SuccessInterval[0]), f(r.SuccessInterval[1]),
			f(r.CostUSD), f(r.CostPerSuccessUSD), f(r.TokensPerSuccess), f(r.MedianTurns),
			f(r.TimeToResult.P50), f(r.TimeToResult.P90), f(r.TimeToResult.P99)})
	}
	cw.Flush()
	return cw.Error()
}
