package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/agentfleet/agentfleet/fleet/api"
)

func init() { addCommand(newRoundsCmd) }

// newRoundsCmd is `dispatcher rounds TASK`: the task's first run and each
// follow-up that reopened it, with what triggered it, and its pull
// request's state (GET /v1/tasks/{id}/rounds).
func newRoundsCmd() *cobra.Command {
	var cf clientFlags
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "rounds TASK",
		Short: "List a task's rounds (first run, each follow-up and what triggered it) and its pull request's state",
		Args:  exactArgs(1, "one task id"),
		RunE: func(c *cobra.Command, args []string) error {
			id, err := uuid.Parse(args[0])
			if err != nil {
				return usageErrorf("%q is not a task id (a UUID)", args[0])
			}
			cl, err := cf.client()
			if err != nil {
				return err
			}
			list, err := cl.Rounds(c.Context(), id)
			if err != nil {
				return apiFail(err)
			}
			if asJSON {
				printJSON(c.OutOrStdout(), list)
				return nil
			}
			printRounds(c.OutOrStdout(), list)
			return nil
		},
	}
	cf.register(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func printRounds(w io.Writer, list api.RoundList) {
	for _, r := range list.Rounds {
		what := []string{r.Trigger}
		for _, s := range []string{r.Cause, r.Detail} {
			if s != "" {
				what = append(what, s)
			}
		}
		if r.By != "" {
			what = append(what, "by "+r.By)
		}
		fmt.Fprintf(w, "round %d  %s  %s\n", r.Round, r.At.UTC().Format(time.RFC3339), strings.Join(what, " "))
	}
	if pr := list.PullRequest; pr != nil {
		fmt.Fprintf(w, "pull request #%d %s %s\n", pr.Number, pr.State, pr.URL)
	}
}

// parseRunAt reads --run-at: an RFC 3339 time, or a duration from now
// ("2h", "30m").
func parseRunAt(s string, now time.Time) (time.Time, error) {
	if d, err := time.ParseDuration(s); err == nil {
		return now.Add(d).UTC().Truncate(time.Second), nil
	}
	at, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, usageErrorf("--run-at %q is neither a time such as 2026-12-01T03:00:00Z nor a duration such as 2h", s)
	}
	return at, nil
}
