package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/agentfleet/agentfleet/fleet/api"
	"github.com/agentfleet/agentfleet/fleet/client"
	"github.com/agentfleet/agentfleet/store"
)

func init() { addCommand(newSearchCmd) }

// newSearchCmd is `dispatcher search WORDS...`: GET /v1/tasks?q= with the
// list filters, newest first, one page (--cursor for the next).
func newSearchCmd() *cobra.Command {
	var cf clientFlags
	var f client.ListFilter
	var labels, states []string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   `search WORDS... [--state S] [--label k=v] [--tenant T] [--queue Q]`,
		Short: "Find tasks by the text of their prompt, final answer or failure reason",
		Long: "Find tasks by the text of their prompt, final answer or failure reason, newest first.\n\n" +
			"Every word must match (stemmed: \"failing\" finds \"failed\"); \"a phrase\" matches as one, " +
			"word or word takes either, -word excludes (after --, so it is not read as a flag). " +
			"Only your tenants' tasks are searched.\n\n" +
			`Example: dispatcher search --state failed -- linter '"pkg/router"' -flaky`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageErrorf("want the words to search for, e.g. dispatcher search linter timeout")
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			f.Query = strings.Join(args, " ")
			var err error
			if f.Labels, f.States, err = listFlags(labels, states); err != nil {
				return err
			}
			cl, err := cf.client()
			if err != nil {
				return err
			}
			page, err := cl.List(c.Context(), f)
			if err != nil {
				return apiFail(err)
			}
			if asJSON {
				printJSON(c.OutOrStdout(), page)
				return nil
			}
			printFound(c.OutOrStdout(), page)
			return nil
		},
	}
	cf.register(cmd)
	fl := cmd.Flags()
	fl.StringVar(&f.Tenant, "tenant", "", "only this tenant's tasks")
	fl.StringVar(&f.Queue, "queue", "", "only this queue's tasks")
	fl.StringSliceVar(&labels, "label", nil, "only tasks with this label, key=value (repeatable: all of them)")
	fl.StringSliceVar(&states, "state", nil, "only tasks in these states (repeatable or comma-separated)")
	fl.IntVar(&f.Limit, "limit", 20, "tasks per page, 1 to 1000")
	fl.StringVar(&f.Cursor, "cursor", "", "the next page: the cursor the previous one printed")
	fl.BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// listFlags reads --label and --state.
func listFlags(labels, states []string) (map[string]string, []store.TaskState, error) {
	var m map[string]string
	for _, l := range labels {
		k, v, ok := strings.Cut(l, "=")
		if !ok || k == "" {
			return nil, nil, usageErrorf("--label %q must be key=value", l)
		}
		if m == nil {
			m = map[string]string{}
		}
		m[k] = v
	}
	var sts []store.TaskState
	for _, s := range states {
		st := store.TaskState(strings.TrimSpace(s))
		if !st.Valid() {
			return nil, nil, usageErrorf("--state %q is not a task state (want one of %v)", s, store.TaskStates)
		}
		sts = append(sts, st)
	}
	return m, sts, nil
}

// printFound prints one line per task: id, state, created, and the
// prompt (or the failure reason of a failed task), cut to fit a line.
func printFound(w io.Writer, page api.TaskList) {
	if len(page.Tasks) == 0 {
		fmt.Fprintln(w, "no task matches")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATE\tCREATED\tPROMPT / FAILURE")
	for _, t := range page.Tasks {
		var spec struct {
			Prompt string `json:"prompt"`
		}
		_ = json.Unmarshal(t.Spec, &spec)
		text := spec.Prompt
		if t.Error != "" {
			text = t.Error
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", t.ID, t.State, t.CreatedAt.UTC().Format("2006-01-02 15:04"), cut(text, 60))
	}
	_ = tw.Flush()
	if page.NextCursor != "" {
		fmt.Fprintf(w, "more: --cursor %s\n", page.NextCursor)
	}
}

// cut keeps the first n runes of s's first line, marking a cut with "…".
func cut(s string, n int) string {
	s, _, more := strings.Cut(strings.TrimSpace(s), "\n")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	if more {
		return s + " …"
	}
	return s
}
