package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/api"
)

func init() {
	addCommand(newGetCmd)
	addCommand(newCancelCmd)
	addCommand(newSteerCmd)
}

func newGetCmd() *cobra.Command {
	var cf clientFlags
	var asJSON, tree bool
	cmd := &cobra.Command{
		Use:   "get TASK",
		Short: "Show a task: state, result, error (--tree: its whole tree)",
		Args:  exactArgs(1, "one task id"),
		RunE: func(c *cobra.Command, args []string) error {
			id, cl, err := cf.taskClient(args[0])
			if err != nil {
				return err
			}
			out := c.OutOrStdout()
			if tree {
				t, err := cl.Tree(c.Context(), id)
				if err != nil {
					return apiFail(err)
				}
				if asJSON {
					printJSON(out, t)
				} else {
					printTree(out, t)
				}
				return nil
			}
			t, err := cl.Get(c.Context(), id)
			if err != nil {
				return apiFail(err)
			}
			if asJSON {
				printJSON(out, t)
			} else {
				printTask(out, t)
			}
			return nil
		},
	}
	cf.register(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().BoolVar(&tree, "tree", false, "show the task's whole tree")
	return cmd
}

func printTask(w io.Writer, t api.TaskView) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "id\t%s\n", t.ID)
	if t.ParentID != [16]byte{} {
		fmt.Fprintf(tw, "parent\t%s (root %s, depth %d)\n", t.ParentID, t.RootID, t.Depth)
	}
	fmt.Fprintf(tw, "state\t%s\n", t.State)
	if t.Error != "" {
		fmt.Fprintf(tw, "error\t%s\n", t.Error)
	}
	fmt.Fprintf(tw, "queue\t%s\n", t.Queue)
	fmt.Fprintf(tw, "attempts\t%d\n", t.Attempts)
	if t.WorkerID != "" {
		fmt.Fprintf(tw, "worker\t%s\n", t.WorkerID)
	}
	fmt.Fprintf(tw, "created\t%s\n", t.CreatedAt.Format(time.RFC3339))
	if !t.FinishedAt.IsZero() {
		fmt.Fprintf(tw, "finished\t%s (%s after creation)\n", t.FinishedAt.Format(time.RFC3339), t.FinishedAt.Sub(t.CreatedAt).Round(time.Millisecond))
	}
	printPendingApprovals(tw, t)
	if r, ok := t.TaskResult(); ok {
		fmt.Fprintf(tw, "success\t%v\n", r.Success)
		fmt.Fprintf(tw, "turns\t%d\n", r.TurnsUsed)
		fmt.Fprintf(tw, "tokens\t%d in, %d out\n", r.Usage.InputTokens, r.Usage.OutputTokens)
		if u := r.Usage; u.CacheReadTokens > 0 || u.CacheWriteTokens > 0 {
			fmt.Fprintf(tw, "prompt cache\t%d read, %d written (of the input)\n", u.CacheReadTokens, u.CacheWriteTokens)
		}
		if r.CostUSD > 0 {
			fmt.Fprintf(tw, "cost\t$%.4f\n", r.CostUSD)
		}
		if r.Error != "" {
			fmt.Fprintf(tw, "result error\t%s\n", r.Error)
		}
		printOutcome(tw, r)
	}
	_ = tw.Flush()
	if r, ok := t.TaskResult(); ok && r.FinalText != "" {
		fmt.Fprintf(w, "\n%s\n", strings.TrimSpace(r.FinalText))
	}
	if r, ok := t.TaskResult(); ok {
		printStructured(w, r)
	}
}

func printTree(w io.Writer, t api.TaskTree) {
	for _, task := range t.Tasks {
		fmt.Fprintf(w, "%s%s  %s", strings.Repeat("  ", task.Depth), task.ID, task.State)
		if task.Error != "" {
			fmt.Fprintf(w, "  (%s)", task.Error)
		}
		fmt.Fprintln(w)
	}
}

func newCancelCmd() *cobra.Command {
	var cf clientFlags
	var reason string
	cmd := &cobra.Command{
		Use:   "cancel TASK",
		Short: "Cancel a task and its whole subtree",
		Args:  exactArgs(1, "one task id"),
		RunE: func(c *cobra.Command, args []string) error {
			id, cl, err := cf.taskClient(args[0])
			if err != nil {
				return err
			}
			res, err := cl.Cancel(c.Context(), id, reason)
			if err != nil {
				return apiFail(err)
			}
			fmt.Fprintf(c.OutOrStdout(), "cancelled %s (%d running session(s) aborted)\n", tasks(int64(len(res.Cancelled))), res.Aborted)
			for _, t := range res.Cancelled {
				fmt.Fprintf(c.OutOrStdout(), "  %s (was %s)\n", t.ID, t.From)
			}
			return nil
		},
	}
	cf.register(cmd)
	cmd.Flags().StringVar(&reason, "reason", "", "reason stored with the tasks (default \"cancelled\")")
	return cmd
}

func newSteerCmd() *cobra.Command {
	var cf clientFlags
	var followUp, compactNow bool
	var effort, model string
	var cmdTimeout time.Duration
	cmd := &cobra.Command{
		Use:   "steer TASK [MESSAGE]",
		Short: "Steer a running session, queue a follow-up, compact it, or change its reasoning effort or model",
		Long: `Steer a running task's session: MESSAGE is injected between its tool rounds.
--follow-up queues MESSAGE as the next input instead. --effort, --model and
--command-timeout change the session's reasoning effort, model and default command
timeout from its next turn; --compact has it compact its context (summarize the older
turns) before its next model call (MESSAGE is then optional).`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(c *cobra.Command, args []string) error {
			id, cl, err := cf.taskClient(args[0])
			if err != nil {
				return err
			}
			msg := ""
			if len(args) == 2 {
				msg = args[1]
			}
			if msg == "" && effort == "" && model == "" && cmdTimeout == 0 && !compactNow {
				return usageErrorf("give a MESSAGE, --effort, --model, --command-timeout or --compact")
			}
			if compactNow {
				if _, err := cl.Compact(c.Context(), id); err != nil {
					return apiFail(err)
				}
				fmt.Fprintln(c.OutOrStdout(), "compaction requested")
			}
			if effort != "" || model != "" || cmdTimeout != 0 {
				if _, err := cl.Configure(c.Context(), id, api.ConfigureRequest{ReasoningEffort: effort, Model: model,
					CommandTimeout: fleet.Duration(cmdTimeout)}); err != nil {
					return apiFail(err)
				}
				fmt.Fprintln(c.OutOrStdout(), "configured")
			}
			if msg == "" {
				return nil
			}
			send, what := cl.Steer, "steered"
			if followUp {
				send, what = cl.FollowUp, "follow-up queued"
			}
			if _, err := send(c.Context(), id, msg); err != nil {
				return apiFail(err)
			}
			fmt.Fprintln(c.OutOrStdout(), what)
			return nil
		},
	}
	cf.register(cmd)
	cmd.Flags().BoolVar(&followUp, "follow-up", false, "queue MESSAGE as the next input instead of steering")
	cmd.Flags().StringVar(&effort, "effort", "", "reasoning effort: minimal, low, medium, high, xhigh")
	cmd.Flags().StringVar(&model, "model", "", "model to use from the next turn")
	cmd.Flags().DurationVar(&cmdTimeout, "command-timeout", 0, "default command timeout from the next tool call (e.g. 2m)")
	cmd.Flags().BoolVar(&compactNow, "compact", false, "compact the session's context before its next model call")
	return cmd
}
