package main

import (
	"fmt"
	"io"
	"math"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentfleet/agentfleet/fleet/api"
	"github.com/agentfleet/agentfleet/fleet/client"
)

func init() {
	addCommand(newBudgetCmd)
	addCommand(newUsageCmd)
}

func newBudgetCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "budget",
		Short: "Spending caps per label, fleet-wide or within a tenant (--tenant; LABEL * is the whole tenant): set, show, list, remove (docs/operations.md, cost and rate limits)",
	}
	cmd.AddCommand(newBudgetSetCmd(), newBudgetGetCmd(), newBudgetListCmd(), newBudgetRmCmd())
	return cmd
}

func newBudgetSetCmd() *cobra.Command {
	var cf clientFlags
	var tenant string
	var limit float64
	var cancel, asJSON bool
	cmd := &cobra.Command{
		Use:   "set LABEL --limit USD [--tenant T] [--cancel]",
		Short: "Cap what the tasks labelled LABEL (key=value; * with --tenant: every task of the tenant) may spend; when spent they are held, or cancelled with --cancel",
		Args:  exactArgs(1, "one label, key=value"),
		RunE: func(c *cobra.Command, args []string) error {
			if !c.Flags().Changed("limit") {
				return usageErrorf("--limit is required: the budget in USD, e.g. --limit 50")
			}
			if limit < 0 || math.IsNaN(limit) || math.IsInf(limit, 0) {
				return usageErrorf("--limit must be a number >= 0 (USD), got %v", limit)
			}
			cl, err := cf.client()
			if err != nil {
				return err
			}
			req := api.BudgetRequest{LimitUSD: limit, OnExhausted: "hold"}
			if cancel {
				req.OnExhausted = "cancel"
			}
			b, err := cl.PutTenantBudget(c.Context(), tenant, args[0], req)
			if err != nil {
				return apiFail(err)
			}
			if asJSON {
				printJSON(c.OutOrStdout(), b)
				return nil
			}
			printBudgets(c.OutOrStdout(), []api.Budget{b})
			if b.Note != "" {
				fmt.Fprintln(c.ErrOrStderr(), "note:", b.Note)
			}
			return nil
		},
	}
	cf.register(cmd)
	tenantFlag(cmd, &tenant)
	cmd.Flags().Float64Var(&limit, "limit", 0, "the budget in USD (>= 0)")
	cmd.Flags().BoolVar(&cancel, "cancel", false, "cancel the label's tasks when it is spent, instead of holding them")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func newBudgetGetCmd() *cobra.Command {
	var cf clientFlags
	var tenant string
	cmd := &cobra.Command{
		Use:   "get LABEL",
		Short: "Show a label's budget and its spend at the last check",
		Args:  exactArgs(1, "one label, key=value"),
		RunE: func(c *cobra.Command, args []string) error {
			cl, err := cf.client()
			if err != nil {
				return err
			}
			b, err := cl.TenantBudget(c.Context(), tenant, args[0])
			if err != nil {
				return apiFail(err)
			}
			printBudgets(c.OutOrStdout(), []api.Budget{b})
			return nil
		},
	}
	cf.register(cmd)
	tenantFlag(cmd, &tenant)
	return cmd
}

func newBudgetListCmd() *cobra.Command {
	var cf clientFlags
	var tenant string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the budgets you may see (--tenant: one tenant's)",
		Args:  exactArgs(0, "no argument"),
		RunE: func(c *cobra.Command, _ []string) error {
			cl, err := cf.client()
			if err != nil {
				return err
			}
			l, err := cl.TenantBudgets(c.Context(), tenant)
			if err != nil {
				return apiFail(err)
			}
			printBudgets(c.OutOrStdout(), l.Budgets)
			return nil
		},
	}
	cf.register(cmd)
	tenantFlag(cmd, &tenant)
	return cmd
}

func newBudgetRmCmd() *cobra.Command {
	var cf clientFlags
	var tenant string
	cmd := &cobra.Command{
		Use:   "rm LABEL",
		Short: "Remove a label's budget; its held tasks start again",
		Args:  exactArgs(1, "one label, key=value"),
		RunE: func(c *cobra.Command, args []string) error {
			cl, err := cf.client()
			if err != nil {
				return err
			}
			if err := cl.DeleteTenantBudget(c.Context(), tenant, args[0]); err != nil {
				return apiFail(err)
			}
			return nil
		},
	}
	cf.register(cmd)
	tenantFlag(cmd, &tenant)
	return cmd
}

// tenantFlag registers --tenant: the budget's tenant; without it the
// budget is fleet-wide, which only an admin of every tenant sets.
func tenantFlag(cmd *cobra.Command, tenant *string) {
	cmd.Flags().StringVar(tenant, "tenant", "", "the tenant whose budget this is (its tasks only); empty: a fleet-wide budget, an admin of every tenant's")
}

func printBudgets(out io.Writer, bs []api.Budget) {
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TENANT\tLABEL\tLIMIT\tSPENT\tSTATE\tWHEN SPENT")
	for _, b := range bs {
		state := "ok"
		if b.Exhausted {
			state = "spent"
		}
		tenant := b.Tenant
		if tenant == "" {
			tenant = "(fleet)"
		}
		fmt.Fprintf(tw, "%s\t%s\t$%.2f\t$%.4f\t%s\t%s\n", tenant, b.Label, b.LimitUSD, b.SpentUSD, state, b.OnExhausted)
	}
	_ = tw.Flush()
}

func newUsageCmd() *cobra.Command {
	var cf clientFlags
	var q client.UsageQuery
	var labels []string
	var since string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "usage [--by label|profile|model|day] [--label-key K] [--label k=v] [--since DATE]",
		Short: "Token usage and cost, grouped",
		Args:  exactArgs(0, "no argument"),
		RunE: func(c *cobra.Command, _ []string) error {
			cl, err := cf.client()
			if err != nil {
				return err
			}
			if q.Labels, err = labelFlags(labels); err != nil {
				return err
			}
			if since != "" {
				if q.Since, err = time.Parse(time.DateOnly, since); err != nil {
					return usageErrorf("--since %q is not a date such as 2025-01-02", since)
				}
			}
			rep, err := cl.Usage(c.Context(), q)
			if err != nil {
				return apiFail(err)
			}
			if asJSON {
				printJSON(c.OutOrStdout(), rep)
				return nil
			}
			printUsage(c.OutOrStdout(), rep)
			return nil
		},
	}
	cf.register(cmd)
	cmd.Flags().StringVar(&q.GroupBy, "by", "", "group by label, profile, model or day (default: the total)")
	cmd.Flags().StringVar(&q.LabelKey, "label-key", "", "with --by label: the label whose values are the groups")
	cmd.Flags().StringArrayVar(&labels, "label", nil, "only tasks carrying this label (k=v; repeats)")
	cmd.Flags().StringVar(&since, "since", "", "only sessions created on or after this date (YYYY-MM-DD)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func labelFlags(vals []string) (map[string]string, error) {
	if len(vals) == 0 {
		return nil, nil
	}
	m := map[string]string{}
	for _, v := range vals {
		k, val, ok := cutLabel(v)
		if !ok {
			return nil, usageErrorf("--label %q must be key=value", v)
		}
		m[k] = val
	}
	return m, nil
}

func cutLabel(s string) (string, string, bool) {
	for i := range len(s) {
		if s[i] == '=' {
			return s[:i], s[i+1:], i > 0
		}
	}
	return "", "", false
}

func printUsage(out io.Writer, rep api.UsageReport) {
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "GROUP\tTASKS\tINPUT\tCACHE READ\tCACHE WRITE\tOUTPUT\tCOST")
	row := func(name string, r api.UsageRow) {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d (%.0f%%)\t%d\t%d\t$%.4f\n", name, r.Tasks, r.Usage.InputTokens,
			r.Usage.CacheReadTokens, 100*r.CacheReadShare, r.Usage.CacheWriteTokens, r.Usage.OutputTokens, r.CostUSD)
	}
	for _, r := range rep.Rows {
		name := r.Key
		switch {
		case rep.GroupBy == "":
			name = "total"
		case name == "":
			name = "(none)"
		}
		row(name, r)
	}
	if rep.GroupBy != "" {
		row("total", rep.Total)
	}
	_ = tw.Flush()
	for _, r := range rep.Unpriced {
		fmt.Fprintf(out, "unpriced: %s, %d sessions, %d tokens: cost unknown, counted as $0 (set prices.%s)\n",
			r.Key, r.Sessions, r.Usage.InputTokens+r.Usage.OutputTokens, r.Key)
	}
}
