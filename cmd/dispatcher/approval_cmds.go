package main

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/api"
	"github.com/agentfleet/agentfleet/store"
)

func init() {
	addCommand(func() *cobra.Command { return newDecideCmd(api.DecisionApprove) })
	addCommand(func() *cobra.Command { return newDecideCmd(api.DecisionDeny) })
	addCommand(newPermissionsCmd)
}

// newDecideCmd is `dispatcher approve` or `dispatcher deny`.
func newDecideCmd(decision string) *cobra.Command {
	var cf clientFlags
	var reason, by string // by is only parsed, for old scripts
	var remember bool
	short := map[string]string{
		api.DecisionApprove: "Approve a tool call a task waits on: it runs when the task resumes",
		api.DecisionDeny:    "Deny a tool call a task waits on: the model gets an error result with the reason",
	}[decision]
	cmd := &cobra.Command{
		Use:   decision + " TASK CALL",
		Short: short,
		Long: short + `.
CALL is the call_id of the pending call (dispatcher permissions TASK lists them).
--remember applies the answer to the task's later calls of the same tool that the
same rule asks about.`,
		Args: exactArgs(2, "a task id and a call id"),
		RunE: func(c *cobra.Command, args []string) error {
			id, cl, err := cf.taskClient(args[0])
			if err != nil {
				return err
			}
			res, err := cl.Decide(c.Context(), id, args[1], api.ApprovalRequest{Decision: decision, Reason: reason, Remember: remember})
			if err != nil {
				return apiFail(err)
			}
			done := map[string]string{api.DecisionApprove: "approved", api.DecisionDeny: "denied"}[decision]
			fmt.Fprintf(c.OutOrStdout(), "%s %s call %s (%s: %s); the task resumes\n", done, res.Call.Tool, res.Call.CallID, res.Call.Rule, res.Call.Summary)
			return nil
		},
	}
	cf.register(cmd)
	cmd.Flags().StringVar(&reason, "reason", "", "why; the model is told on a denial")
	cmd.Flags().StringVar(&by, "by", "", "ignored: the answer is recorded as your token's principal")
	_ = cmd.Flags().MarkDeprecated("by", "the approver recorded is the principal of your token (dispatcher whoami)")
	cmd.Flags().BoolVar(&remember, "remember", false, "apply the answer to the rest of the task's calls that the same rule asks about")
	return cmd
}

func newPermissionsCmd() *cobra.Command {
	var cf clientFlags
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "permissions TASK",
		Short: "List a task's tool calls waiting for approval and its permission denials and answers",
		Args:  exactArgs(1, "one task id"),
		RunE: func(c *cobra.Command, args []string) error {
			id, cl, err := cf.taskClient(args[0])
			if err != nil {
				return err
			}
			v, err := cl.Permissions(c.Context(), id)
			if err != nil {
				return apiFail(err)
			}
			if asJSON {
				printJSON(c.OutOrStdout(), v)
				return nil
			}
			printPermissions(c.OutOrStdout(), v)
			return nil
		},
	}
	cf.register(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func printPermissions(w io.Writer, v api.PermissionsView) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "STATE\tCALL\tTOOL\tRULE\tARGUMENTS\tEXPIRES / REASON\n")
	for _, p := range v.Pending {
		fmt.Fprintf(tw, "pending\t%s\t%s\t%s\t%s\t%s\n", p.CallID, p.Tool, p.Rule, p.Summary, p.ExpiresAt.Format(time.RFC3339))
	}
	for _, r := range v.Records {
		what := r.Kind
		if r.Answer != nil {
			what = "denied by " + r.Answer.By
			if r.Answer.Approved {
				what = "approved by " + r.Answer.By
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", what, r.CallID, r.Tool, r.Rule, r.Summary, r.Reason)
	}
	_ = tw.Flush()
}

// printPendingApprovals adds the calls a waiting task waits to have
// approved to `dispatcher get`, with the command that answers them.
func printPendingApprovals(w io.Writer, t api.TaskView) {
	if t.State != store.TaskWaiting {
		return
	}
	wf, err := fleet.DecodeWaitingFor(t.WaitingFor)
	if err != nil {
		return
	}
	for _, p := range wf.Approvals {
		fmt.Fprintf(w, "waits for approval\t%s %s (%s): %s\n", p.Tool, p.CallID, p.Rule, p.Summary)
		fmt.Fprintf(w, "\tdispatcher approve|deny %s %s\n", t.ID, p.CallID)
	}
}
