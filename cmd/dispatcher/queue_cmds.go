package main

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/agentfleet/agentfleet/fleet/api"
)

func init() { addCommand(newQueuesCmd) }

func newQueuesCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "queues",
		Short: "Pause and resume queues, list the pauses in force (docs/api.md, pauses)",
	}
	var cf clientFlags
	var reason string
	pause := &cobra.Command{
		Use:   "pause QUEUE",
		Short: "Stop every worker pulling QUEUE (admin of every tenant); its tasks keep their place, running ones go on",
		Args:  exactArgs(1, "the queue's name"),
		RunE: func(c *cobra.Command, args []string) error {
			cl, err := cf.client()
			if err != nil {
				return err
			}
			if _, err := cl.PauseQueue(c.Context(), args[0], reason); err != nil {
				return apiFail(err)
			}
			fmt.Fprintf(c.OutOrStdout(), "queue %s paused: no worker takes its tasks until `dispatcher queues resume %s`\n", args[0], args[0])
			return nil
		},
	}
	pause.Flags().StringVar(&reason, "reason", "", "why, shown by `dispatcher queues list`")
	var cfResume clientFlags
	resume := &cobra.Command{
		Use:   "resume QUEUE",
		Short: "Let workers pull QUEUE again, oldest task first",
		Args:  exactArgs(1, "the queue's name"),
		RunE: func(c *cobra.Command, args []string) error {
			cl, err := cfResume.client()
			if err != nil {
				return err
			}
			if err := cl.ResumeQueue(c.Context(), args[0]); err != nil {
				return apiFail(err)
			}
			fmt.Fprintf(c.OutOrStdout(), "queue %s resumed\n", args[0])
			return nil
		},
	}
	var cfList clientFlags
	var asJSON bool
	list := &cobra.Command{
		Use:   "list",
		Short: "List the pauses in force (queues and filters) and how many tasks are held",
		Args:  exactArgs(0, "no argument"),
		RunE: func(c *cobra.Command, _ []string) error {
			cl, err := cfList.client()
			if err != nil {
				return err
			}
			v, err := cl.Pauses(c.Context())
			if err != nil {
				return apiFail(err)
			}
			if asJSON {
				printJSON(c.OutOrStdout(), v)
				return nil
			}
			printPauses(c.OutOrStdout(), v)
			return nil
		},
	}
	list.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cf.register(pause)
	cfResume.register(resume)
	cfList.register(list)
	cmd.AddCommand(pause, resume, list)
	return cmd
}

func printPauses(w io.Writer, v api.PausesView) {
	if len(v.Pauses) == 0 {
		fmt.Fprintln(w, "no pause in force")
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, p := range v.Pauses {
		what := "queue " + p.Queue
		if p.Filter != nil {
			what = "filter " + describeFilter(*p.Filter)
			if p.Tenants != nil {
				what += fmt.Sprintf(" in %v", p.Tenants)
			}
		}
		fmt.Fprintf(tw, "%s\t%s\tby %s at %s\t%s\n", p.ID, what, p.By, p.At.Format(time.RFC3339), p.Reason)
	}
	_ = tw.Flush()
	fmt.Fprintf(w, "%s held by workers\n", tasks(int64(v.Held)))
}

// describeFilter is a filter in the flags' words.
func describeFilter(f api.BulkFilter) string {
	s := ""
	add := func(k, v string) {
		if v != "" {
			s += " --" + k + " " + v
		}
	}
	add("tenant", f.Tenant)
	for k, v := range f.Labels {
		add("label", k+"="+v)
	}
	add("queue", f.Queue)
	if f.RootID != uuid.Nil {
		add("root", f.RootID.String())
	}
	if !f.CreatedAfter.IsZero() {
		add("created-after", f.CreatedAfter.Format(time.RFC3339Nano))
	}
	if !f.CreatedBefore.IsZero() {
		add("created-before", f.CreatedBefore.Format(time.RFC3339Nano))
	}
	if s == "" {
		return "(none)"
	}
	return s[1:]
}
