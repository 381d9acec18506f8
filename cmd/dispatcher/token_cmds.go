package main

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentfleet/agentfleet/fleet/api"
	"github.com/agentfleet/agentfleet/fleet/client"
)

func init() {
	addCommand(newTokenCmd)
	addCommand(newAuditCmd)
	addCommand(newWhoamiCmd)
}

func newWhoamiCmd() *cobra.Command {
	var cf clientFlags
	cmd := &cobra.Command{
		Use:   "whoami",
		Short: "Show the principal your token authenticates as, its roles and default tenant",
		Args:  exactArgs(0, "no argument"),
		RunE: func(c *cobra.Command, _ []string) error {
			cl, err := cf.client()
			if err != nil {
				return err
			}
			who, err := cl.Whoami(c.Context())
			if err != nil {
				return apiFail(err)
			}
			var gs []string
			for tenant, role := range who.Grants {
				gs = append(gs, tenant+"="+role)
			}
			sort.Strings(gs)
			fmt.Fprintf(c.OutOrStdout(), "%s (%s): %s; default tenant %s\n", who.ID, who.Name, strings.Join(gs, ", "), who.DefaultTenant)
			return nil
		},
	}
	cf.register(cmd)
	return cmd
}

func newTokenCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "token",
		Short: "API tokens of principals: create (shown once), list, revoke (admin; docs/api.md, principals)",
	}
	cmd.AddCommand(newTokenCreateCmd(), newTokenListCmd(), newTokenRevokeCmd())
	return cmd
}

func newTokenCreateCmd() *cobra.Command {
	var cf clientFlags
	var grants []string
	var defaultTenant, expiresIn string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "create NAME --grant TENANT=ROLE [--grant ...] [--default-tenant T] [--expires-in 720h]",
		Short: "Create an API token; its secret is printed once and never again",
		Long: `Create an API token for a principal named NAME.
Each --grant gives a role in a tenant: viewer, submitter, approver or admin
("*=viewer" for every tenant). You must be admin in every tenant you grant.
The token expires after --expires-in (default 90 days, 2160h).`,
		Args: exactArgs(1, "the token's name"),
		RunE: func(c *cobra.Command, args []string) error {
			req := api.TokenRequest{Name: args[0], Grants: map[string]string{}, DefaultTenant: defaultTenant, ExpiresIn: expiresIn}
			if len(grants) == 0 {
				return usageErrorf("--grant is required: TENANT=ROLE, e.g. --grant team-a=submitter")
			}
			for _, g := range grants {
				tenant, role, ok := strings.Cut(g, "=")
				if !ok || tenant == "" || role == "" {
					return usageErrorf("--grant %q must be TENANT=ROLE, e.g. team-a=submitter or *=viewer", g)
				}
				req.Grants[tenant] = role
			}
			cl, err := cf.client()
			if err != nil {
				return err
			}
			tok, err := cl.CreateToken(c.Context(), req)
			if err != nil {
				return apiFail(err)
			}
			if asJSON {
				printJSON(c.OutOrStdout(), tok)
				return nil
			}
			printTokens(c.OutOrStdout(), []api.TokenView{tok.TokenView})
			fmt.Fprintf(c.OutOrStdout(), "\ntoken (shown once, keep it secret): %s\n", tok.Token)
			return nil
		},
	}
	cf.register(cmd)
	cmd.Flags().StringArrayVar(&grants, "grant", nil, "TENANT=ROLE (repeatable); ROLE is viewer, submitter, approver or admin; TENANT * is every tenant")
	cmd.Flags().StringVar(&defaultTenant, "default-tenant", "", "where the token's submissions go when they name no tenant (required with several tenants)")
	cmd.Flags().StringVar(&expiresIn, "expires-in", "", "lifetime, a duration such as 720h (default 2160h, 90 days)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON (with the secret)")
	return cmd
}

func newTokenListCmd() *cobra.Command {
	var cf clientFlags
	var all, asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the tokens you manage (never their secrets)",
		Args:  exactArgs(0, "no argument"),
		RunE: func(c *cobra.Command, _ []string) error {
			cl, err := cf.client()
			if err != nil {
				return err
			}
			toks, err := cl.ListTokens(c.Context(), all)
			if err != nil {
				return apiFail(err)
			}
			if asJSON {
				printJSON(c.OutOrStdout(), toks)
				return nil
			}
			printTokens(c.OutOrStdout(), toks)
			return nil
		},
	}
	cf.register(cmd)
	cmd.Flags().BoolVar(&all, "all", false, "list revoked tokens too")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func newTokenRevokeCmd() *cobra.Command {
	var cf clientFlags
	cmd := &cobra.Command{
		Use:   "revoke ID",
		Short: "Revoke a token: every dispatcher refuses it from the next request on",
		Args:  exactArgs(1, "a token id (dispatcher token list shows them)"),
		RunE: func(c *cobra.Command, args []string) error {
			cl, err := cf.client()
			if err != nil {
				return err
			}
			tok, err := cl.RevokeToken(c.Context(), args[0])
			if err != nil {
				return apiFail(err)
			}
			fmt.Fprintf(c.OutOrStdout(), "revoked token %s (%s) at %s\n", tok.ID, tok.Name, tok.RevokedAt.Format(time.RFC3339))
			return nil
		},
	}
	cf.register(cmd)
	return cmd
}

func printTokens(w io.Writer, toks []api.TokenView) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tGRANTS\tDEFAULT TENANT\tEXPIRES\tCREATED BY\tREVOKED")
	for _, t := range toks {
		var gs []string
		for tenant, role := range t.Grants {
			gs = append(gs, tenant+"="+role)
		}
		sort.Strings(gs)
		revoked := "-"
		if !t.RevokedAt.IsZero() {
			revoked = t.RevokedAt.Format(time.RFC3339)
		}
		expires := "never"
		if !t.ExpiresAt.IsZero() {
			expires = t.ExpiresAt.Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", t.ID, t.Name, strings.Join(gs, ","), t.DefaultTenant, expires, t.CreatedBy, revoked)
	}
	_ = tw.Flush()
}

func newAuditCmd() *cobra.Command {
	var cf clientFlags
	var f client.AuditFilter
	var since, until string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "audit [--tenant T] [--principal P] [--action A] [--since D] [--until D]",
		Short: "Show the audit log of mutating calls, newest first (admin)",
		Args:  exactArgs(0, "no argument; filter with flags"),
		RunE: func(c *cobra.Command, _ []string) error {
			for name, v := range map[string]struct {
				s   string
				dst *time.Time
			}{"since": {since, &f.Since}, "until": {until, &f.Until}} {
				if v.s == "" {
					continue
				}
				t, err := time.Parse(time.DateOnly, v.s)
				if err != nil {
					if t, err = time.Parse(time.RFC3339, v.s); err != nil {
						return usageErrorf("--%s %q must be a date (2025-01-02) or an RFC 3339 time", name, v.s)
					}
				}
				*v.dst = t
			}
			cl, err := cf.client()
			if err != nil {
				return err
			}
			page, err := cl.Audit(c.Context(), f)
			if err != nil {
				return apiFail(err)
			}
			if asJSON {
				printJSON(c.OutOrStdout(), page)
				return nil
			}
			tw := tabwriter.NewWriter(c.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "AT\tPRINCIPAL\tTENANT\tACTION\tTARGET\tSTATUS\tERROR")
			for _, e := range page.Entries {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\n", e.At.Format(time.RFC3339), e.Principal, e.Tenant, e.Action, e.Target, e.Status, e.Error)
			}
			_ = tw.Flush()
			if page.NextCursor != "" {
				fmt.Fprintf(c.OutOrStdout(), "more: --cursor %s\n", page.NextCursor)
			}
			return nil
		},
	}
	cf.register(cmd)
	cmd.Flags().StringVar(&f.Tenant, "tenant", "", "one tenant")
	cmd.Flags().StringVar(&f.Principal, "principal", "", "one principal (token:<id>, bootstrap, ...)")
	cmd.Flags().StringVar(&f.Action, "action", "", "one action (task.submit, task.cancel, approval.approve, token.create, ...)")
	cmd.Flags().StringVar(&since, "since", "", "from this date or time")
	cmd.Flags().StringVar(&until, "until", "", "before this date or time")
	cmd.Flags().IntVar(&f.Limit, "limit", 0, "entries per page (default 100, at most 1000)")
	cmd.Flags().StringVar(&f.Cursor, "cursor", "", "the next page, as the previous one said")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}
