package main

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/api"
	"github.com/agentfleet/agentfleet/fleet/client"
)

func init() {
	addCommand(newTasksCmd)
	addCommand(newRetentionCmd)
}

func newTasksCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tasks",
		Short: "Act on every task a filter selects: retry, cancel, pause, resume (docs/api.md, bulk actions)",
	}
	cmd.AddCommand(newBulkCmd(api.BulkRetry, "Retry every ended root task the filter selects (a new attempt each; running it again makes no duplicate)"),
		newBulkCmd(api.BulkCancel, "Cancel every task the filter selects that has not ended, with its subtree"),
		newBulkCmd(api.BulkPause, "Hold every queued root task the filter selects, and those submitted later, until resumed (running tasks keep running)"),
		newBulkCmd(api.BulkResume, "End the pause made with the same filter: its held tasks start again, in their order"),
		newBulkCmd(api.BulkSetPriority, "Set the priority of every queued root task the filter selects, moving it to its new level (running tasks keep theirs)"))
	return cmd
}

// bulkFlags are the filter flags of `dispatcher tasks ACTION`.
type bulkFlags struct {
	tenant, queue, root, errorText, after, before, reason string
	labels, states                                        []string
	dryRun, yes, asJSON                                   bool
	priority                                              int
}

func (f *bulkFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.tenant, "tenant", "", "only this tenant's tasks")
	fl.StringSliceVar(&f.labels, "label", nil, "only tasks with this label, key=value (repeatable: all of them)")
	fl.StringSliceVar(&f.states, "state", nil, "only tasks in these states (repeatable or comma-separated)")
	fl.StringVar(&f.queue, "queue", "", "only this queue's tasks")
	fl.StringVar(&f.root, "root", "", "only the tasks of this tree (its root's id)")
	fl.StringVar(&f.errorText, "error", "", "only tasks whose failure reason contains this text")
	fl.StringVar(&f.after, "created-after", "", "only tasks created at or after this RFC 3339 time")
	fl.StringVar(&f.before, "created-before", "", "only tasks created before this RFC 3339 time")
	fl.BoolVar(&f.dryRun, "dry-run", false, "print the count and a sample, do nothing")
	fl.BoolVar(&f.yes, "yes", false, "do not ask for confirmation")
	fl.BoolVar(&f.asJSON, "json", false, "print JSON")
}

func (f *bulkFlags) filter() (api.BulkFilter, error) {
	out := api.BulkFilter{Tenant: f.tenant, Queue: f.queue, Error: f.errorText}
	var err error
	if out.Labels, out.States, err = listFlags(f.labels, f.states); err != nil {
		return out, err
	}
	if f.root != "" {
		id, err := uuid.Parse(f.root)
		if err != nil {
			return out, usageErrorf("--root %q is not a task id", f.root)
		}
		out.RootID = id
	}
	for name, p := range map[string]struct {
		s   string
		dst *time.Time
	}{"--created-after": {f.after, &out.CreatedAfter}, "--created-before": {f.before, &out.CreatedBefore}} {
		if p.s == "" {
			continue
		}
		t, err := time.Parse(time.RFC3339Nano, p.s)
		if err != nil {
			return out, usageErrorf("%s %q is not an RFC 3339 time such as 2025-01-02T15:04:05Z", name, p.s)
		}
		*p.dst = t
	}
	if out.IsZero() {
		return out, usageErrorf("name at least one filter (--label, --state, --tenant, --queue, --root, --error, --created-after/--created-before): an action on every task is refused")
	}
	return out, nil
}

func newBulkCmd(action, short string) *cobra.Command {
	var cf clientFlags
	var bf bulkFlags
	name := strings.ReplaceAll(action, "_", "-")
	example := "dispatcher tasks " + name + " --label run=nightly --state failed"
	if action == api.BulkSetPriority {
		example = "dispatcher tasks set-priority --label team=infra --priority 100"
	}
	cmd := &cobra.Command{
		Use:   name + " [filters]",
		Short: short,
		Long: short + ".\n\nIt first shows how many tasks match and asks to go on (--yes does not ask, --dry-run stops there), " +
			"then follows the job's progress to its end.\n\nExample: " + example,
		Args: exactArgs(0, "no argument (the filter is given by flags)"),
		RunE: func(c *cobra.Command, _ []string) error {
			filter, err := bf.filter()
			if err != nil {
				return err
			}
			cl, err := cf.client()
			if err != nil {
				return err
			}
			req := api.BulkRequest{Action: action, Filter: filter, Reason: bf.reason}
			if action == api.BulkSetPriority {
				if !c.Flags().Changed("priority") {
					return usageErrorf("set-priority needs --priority N (-1000 to 1000; higher starts first)")
				}
				req.Priority = &bf.priority
			}
			out := c.OutOrStdout()
			prev, err := cl.BulkPreview(c.Context(), req)
			if err != nil {
				return apiFail(err)
			}
			if bf.dryRun && bf.asJSON {
				printJSON(out, prev)
				return nil
			}
			printPreview(out, prev)
			standing := action == api.BulkPause || action == api.BulkResume // acts on later tasks too
			if bf.dryRun || prev.Matched == 0 && !standing {
				return nil
			}
			question := fmt.Sprintf("%s %s? [y/N] ", action, tasks(int64(prev.Matched)))
			if action == api.BulkPause {
				question = fmt.Sprintf("pause %s queued now, and every task of the filter submitted until resumed? [y/N] ", tasks(int64(prev.Matched)))
			}
			if !bf.yes && !confirm(c.InOrStdin(), out, question) {
				return failf("nothing done (answer y, or pass --yes)")
			}
			return followBulk(c, cl, req, bf.asJSON)
		},
	}
	cf.register(cmd)
	bf.register(cmd)
	switch action {
	case api.BulkCancel:
		cmd.Flags().StringVar(&bf.reason, "reason", "", "reason stored with the tasks (default \"cancelled\")")
	case api.BulkPause:
		cmd.Flags().StringVar(&bf.reason, "reason", "", "why, shown with the pause (dispatcher queues list)")
	case api.BulkSetPriority:
		cmd.Flags().IntVar(&bf.priority, "priority", 0, "the new priority (required)")
	}
	return cmd
}

func followBulk(c *cobra.Command, cl *client.Client, req api.BulkRequest, asJSON bool) error {
	out := c.OutOrStdout()
	job, err := cl.Bulk(c.Context(), req)
	if err != nil {
		return apiFail(err)
	}
	last := -1
	job, err = cl.WaitBulk(c.Context(), job.ID, 500*time.Millisecond, func(j api.BulkJob) {
		if !asJSON && j.Done != last && j.State == api.BulkRunning {
			fmt.Fprintf(out, "  %d of %d done\n", j.Done, j.Matched)
			last = j.Done
		}
	})
	if err != nil {
		return apiFail(err)
	}
	if asJSON {
		printJSON(out, job)
	} else {
		printBulkJob(out, job)
	}
	if job.State != api.BulkDone || job.Failed > 0 {
		return failf("bulk %s %s: %d failed", job.Action, job.State, job.Failed)
	}
	return nil
}

func printPreview(w io.Writer, p api.BulkPreview) {
	fmt.Fprintf(w, "%s would act on %s\n", p.Action, tasks(int64(p.Matched)))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, t := range p.Sample {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", t.ID, t.State, t.Tenant, t.Error)
	}
	_ = tw.Flush()
	if p.Matched > len(p.Sample) {
		fmt.Fprintf(w, "  ... and %d more\n", p.Matched-len(p.Sample))
	}
}

func printBulkJob(w io.Writer, j api.BulkJob) {
	fmt.Fprintf(w, "bulk %s %s (job %s): %d matched, %d done", j.Action, j.State, j.ID, j.Matched, j.Done)
	switch j.Action {
	case api.BulkRetry:
		fmt.Fprintf(w, ", %d new attempts, %d already retried", j.Created, j.Existing)
	case api.BulkCancel:
		fmt.Fprintf(w, ", %d cancelled", j.Cancelled)
	case api.BulkPause:
		fmt.Fprintf(w, ", %d held (pause %s; later tasks of the filter are held too)", j.Paused, j.PauseID)
	case api.BulkResume:
		fmt.Fprintf(w, ", %d start again (pause %s ended)", j.Resumed, j.PauseID)
	case api.BulkSetPriority:
		fmt.Fprintf(w, ", %d moved to another priority level", j.Moved)
	}
	fmt.Fprintf(w, ", %d skipped, %d failed\n", j.Skipped, j.Failed)
	for _, e := range j.Errors {
		fmt.Fprintf(w, "  error: %s\n", e)
	}
	if j.Error != "" {
		fmt.Fprintf(w, "  stopped: %s\n", j.Error)
	}
}

// confirm asks question and reports whether the answer is yes.
func confirm(in io.Reader, out io.Writer, question string) bool {
	fmt.Fprint(out, question)
	line, _ := bufio.NewReader(in).ReadString('\n')
	return slices.Contains([]string{"y", "yes"}, strings.ToLower(strings.TrimSpace(line)))
}

func newRetentionCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "retention",
		Short: "How long ended tasks' history is kept (docs/api.md, retention)",
	}
	var cf clientFlags
	var asJSON bool
	show := &cobra.Command{
		Use:   "show",
		Short: "Show the retention policies of your tenants and the rows deleted since the dispatcher started",
		Args:  exactArgs(0, "no argument"),
		RunE: func(c *cobra.Command, _ []string) error {
			cl, err := cf.client()
			if err != nil {
				return err
			}
			v, err := cl.Retention(c.Context())
			if err != nil {
				return apiFail(err)
			}
			out := c.OutOrStdout()
			if asJSON {
				printJSON(out, v)
				return nil
			}
			printRetention(out, v)
			return nil
		},
	}
	cf.register(show)
	show.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.AddCommand(show)
	return cmd
}

func printRetention(w io.Writer, v api.RetentionView) {
	d := func(x interface{ MarshalJSON() ([]byte, error) }) string {
		b, _ := x.MarshalJSON()
		s := strings.Trim(string(b), `"`)
		if s == "0s" {
			return "for ever"
		}
		if strings.HasPrefix(s, "-") {
			return "for ever"
		}
		return s
	}
	events := func(x fleet.Duration) string {
		if x <= 0 {
			return "stream max age"
		}
		return d(x)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TENANT\tTURNS\tTOOL OUTPUTS\tARTIFACTS\tEVENTS\tAUDIT")
	fmt.Fprintf(tw, "(default)\t%s\t%s\t%s\t%s\t%s\n", d(v.Default.Turns), d(v.Default.ToolOutputs), d(v.Default.Artifacts), events(v.Default.Events), d(v.Default.Audit))
	tenants := make([]string, 0, len(v.Tenants))
	for t := range v.Tenants {
		tenants = append(tenants, t)
	}
	slices.Sort(tenants)
	for _, t := range tenants {
		p := v.Tenants[t]
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", t, d(p.Turns), d(p.ToolOutputs), d(p.Artifacts), events(p.Events), d(p.Audit))
	}
	_ = tw.Flush()
	fmt.Fprintf(w, "kept after a task ends (audit: after the call); a tree with a live task keeps everything; shortest window %s; swept every %s\n", d(v.Floor), d(v.Interval))
	fmt.Fprintf(w, "events: %s\n", v.Events)
	fmt.Fprintf(w, "deleted since start: %d turns, %d tool outputs, %d artifacts\n", v.Deleted["turns"], v.Deleted["tool_outputs"], v.Deleted["artifacts"])
}
