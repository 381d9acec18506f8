package main

import (
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentfleet/agentfleet/fleet/api"
	"github.com/agentfleet/agentfleet/fleet/client"
	"github.com/agentfleet/agentfleet/fleet/report"
)

func init() {
	addCommand(newReportCmd)
	addCommand(newExportCmd)
}

// reportFlags are the filter flags of report and export.
type reportFlags struct {
	labels, compare []string
	since, until    string
	tenant          string
	limit           int
}

func (f *reportFlags) register(cmd *cobra.Command, withCompare bool) {
	cmd.Flags().StringArrayVar(&f.labels, "label", nil, "only tasks carrying this label (k=v; repeats)")
	if withCompare {
		cmd.Flags().StringArrayVar(&f.compare, "compare", nil, "compare with the filter whose labels are --label's with these put over them (k=v; repeats)")
	}
	cmd.Flags().StringVar(&f.since, "since", "", "only tasks created on or after this date (YYYY-MM-DD) or RFC 3339 time")
	cmd.Flags().StringVar(&f.until, "until", "", "only tasks created before this date or time")
	cmd.Flags().StringVar(&f.tenant, "tenant", "", "one of your tenants (default: all of them)")
	cmd.Flags().IntVar(&f.limit, "limit", 0, "tasks read per filter, the oldest first (default: the server's, 10000)")
}

func (f *reportFlags) query() (client.ReportQuery, error) {
	q := client.ReportQuery{Tenant: f.tenant, Limit: f.limit}
	var err error
	if q.Labels, err = labelFlags(f.labels); err != nil {
		return q, err
	}
	if q.Compare, err = labelFlags(f.compare); err != nil {
		return q, err
	}
	for name, v := range map[string]struct {
		s   string
		dst *time.Time
	}{"--since": {f.since, &q.Since}, "--until": {f.until, &q.Until}} {
		if v.s == "" {
			continue
		}
		t, err := time.Parse(time.DateOnly, v.s)
		if err != nil {
			if t, err = time.Parse(time.RFC3339Nano, v.s); err != nil {
				return q, usageErrorf("%s %q is not a date (2025-01-02) or an RFC 3339 time", name, v.s)
			}
		}
		*v.dst = t
	}
	if f.limit < 0 {
		return q, usageErrorf("--limit must be a positive number of tasks, got %d", f.limit)
	}
	return q, nil
}

func newReportCmd() *cobra.Command {
	var cf clientFlags
	var rf reportFlags
	var format string
	cmd := &cobra.Command{
		Use:   "report --label k=v [--compare k=v2] [--format md|json|csv]",
		Short: "A backlog report: outcomes, success rate, cost per success, time to result; two filters side by side with --compare",
		Long: `A backlog report of the root tasks carrying every --label: the states over
time, the outcome table, cost and tokens per success, time-to-result
percentiles, the top failure reasons and the success rate with its 95%
Wilson score interval. --compare k=v2 adds the report of the same filter
with k=v2 put over it, side by side (for example --label backlog=q3
--label model=a --compare model=b). md is Markdown for people and CI
summaries; csv has one row per filter for scripts; json is GET /v1/reports.`,
		Args: exactArgs(0, "no argument"),
		RunE: func(c *cobra.Command, _ []string) error {
			render := map[string]func(io.Writer, api.Reports) error{
				"md":   report.Markdown,
				"csv":  report.CSV,
				"json": func(w io.Writer, rs api.Reports) error { printJSON(w, rs); return nil },
			}[format]
			if render == nil {
				return usageErrorf("--format %q must be md, json or csv", format)
			}
			q, err := rf.query()
			if err != nil {
				return err
			}
			cl, err := cf.client()
			if err != nil {
				return err
			}
			rs, err := cl.Reports(c.Context(), q)
			if err != nil {
				return apiFail(err)
			}
			if err := render(c.OutOrStdout(), rs); err != nil {
				return failf("report: %v", err)
			}
			return nil
		},
	}
	cf.register(cmd)
	rf.register(cmd, true)
	cmd.Flags().StringVar(&format, "format", "md", "md, json or csv")
	return cmd
}

func newExportCmd() *cobra.Command {
	var cf clientFlags
	var rf reportFlags
	cmd := &cobra.Command{
		Use:   "export --label k=v > results.jsonl",
		Short: "The finished tasks of a backlog as JSON lines (answer, structured result, checks, pull request, diff) for offline evaluation",
		Args:  exactArgs(0, "no argument"),
		RunE: func(c *cobra.Command, _ []string) error {
			q, err := rf.query()
			if err != nil {
				return err
			}
			cl, err := cf.client()
			if err != nil {
				return err
			}
			body, err := cl.ReportExport(c.Context(), q)
			if err != nil {
				return apiFail(err)
			}
			defer func() { _ = body.Close() }()
			if _, err := io.Copy(c.OutOrStdout(), body); err != nil {
				return failf("export: %v", err)
			}
			return nil
		},
	}
	cf.register(cmd)
	rf.register(cmd, false)
	return cmd
}
