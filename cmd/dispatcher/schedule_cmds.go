package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"text/tabwriter"
	"time"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/api"
)

func init() { addCommand(newScheduleCmd) }

func newScheduleCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "schedule",
		Short: "Cron schedules that submit a task spec at every tick: create, list, pause, resume, rm (docs/api.md)",
	}
	cmd.AddCommand(newScheduleCreateCmd(), newScheduleListCmd(),
		newScheduleIDCmd("pause", "Pause a schedule"), newScheduleIDCmd("resume", "Resume a paused schedule from its next tick"),
		newScheduleIDCmd("rm", "Delete a schedule (the tasks it submitted stay)"))
	return cmd
}

func newScheduleCreateCmd() *cobra.Command {
	var cf clientFlags
	var expr, specFile string
	var paused bool
	cmd := &cobra.Command{
		Use:   "create NAME --cron EXPR --spec FILE [--paused]",
		Short: "Store a schedule: the task spec in FILE (JSON) is submitted at every tick of EXPR (UTC)",
		Long: `Store a schedule that submits the task spec in FILE (JSON, as "submit --spec"
takes it, without idempotency_key) at every tick of the cron expression:
5 fields (minute hour day-of-month month day-of-week, UTC) such as "0 3 * * *",
or a descriptor such as @daily or "@every 6h". Dispatchers fire each tick once.`,
		Args: exactArgs(1, "the schedule's name"),
		RunE: func(c *cobra.Command, args []string) error {
			if expr == "" || specFile == "" {
				return usageErrorf("--cron and --spec are required, e.g. --cron '0 3 * * *' --spec nightly.json")
			}
			spec, err := readSpecFile(specFile)
			if err != nil {
				return err
			}
			cl, err := cf.client()
			if err != nil {
				return err
			}
			s, err := cl.CreateSchedule(c.Context(), api.ScheduleRequest{Name: args[0], Cron: expr, Spec: spec, Paused: paused})
			if err != nil {
				return apiFail(err)
			}
			printSchedules(c.OutOrStdout(), []api.ScheduleView{s})
			return nil
		},
	}
	cf.register(cmd)
	cmd.Flags().StringVar(&expr, "cron", "", `cron expression (UTC), e.g. "0 3 * * *" or @daily`)
	cmd.Flags().StringVar(&specFile, "spec", "", "file holding the task spec (JSON)")
	cmd.Flags().BoolVar(&paused, "paused", false, "store it paused (resume starts it)")
	return cmd
}

// readSpecFile reads one task spec from a JSON file, refusing unknown
// fields.
func readSpecFile(path string) (fleet.TaskSpec, error) {
	var spec fleet.TaskSpec
	b, err := os.ReadFile(path)
	if err != nil {
		return spec, usageErrorf("--spec: %v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&spec); err != nil {
		return spec, usageErrorf("--spec %s is not a task spec: %v", path, err)
	}
	return spec, nil
}

func newScheduleListCmd() *cobra.Command {
	var cf clientFlags
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the schedules of your tenants",
		Args:  exactArgs(0, "no argument"),
		RunE: func(c *cobra.Command, _ []string) error {
			cl, err := cf.client()
			if err != nil {
				return err
			}
			list, err := cl.Schedules(c.Context())
			if err != nil {
				return apiFail(err)
			}
			if asJSON {
				printJSON(c.OutOrStdout(), list)
			} else {
				printSchedules(c.OutOrStdout(), list)
			}
			return nil
		},
	}
	cf.register(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// newScheduleIDCmd is pause, resume or rm of one schedule.
func newScheduleIDCmd(op, short string) *cobra.Command {
	var cf clientFlags
	cmd := &cobra.Command{
		Use:   op + " SCHEDULE",
		Short: short,
		Args:  exactArgs(1, "one schedule id"),
		RunE: func(c *cobra.Command, args []string) error {
			id, err := uuid.Parse(args[0])
			if err != nil {
				return usageErrorf("%q is not a schedule id (a UUID; see schedule list)", args[0])
			}
			cl, err := cf.client()
			if err != nil {
				return err
			}
			if op == "rm" {
				if err := cl.DeleteSchedule(c.Context(), id); err != nil {
					return apiFail(err)
				}
				fmt.Fprintf(c.OutOrStdout(), "schedule %s deleted\n", id)
				return nil
			}
			s, err := cl.PauseSchedule(c.Context(), id, op == "pause")
			if err != nil {
				return apiFail(err)
			}
			printSchedules(c.OutOrStdout(), []api.ScheduleView{s})
			return nil
		},
	}
	cf.register(cmd)
	return cmd
}

func printSchedules(w io.Writer, list []api.ScheduleView) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tCRON\tTENANT\tSTATE\tNEXT")
	for _, s := range list {
		state := "active"
		if s.Paused {
			state = "paused"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", s.ID, s.Name, s.Cron, s.Tenant, state, s.NextFireAt.Format(time.RFC3339))
	}
	_ = tw.Flush()
}
