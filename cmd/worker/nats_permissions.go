package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/queue/natsauth"
)

func init() { addCommand(newNATSPermissionsCmd) }

// newNATSPermissionsCmd prints the nats.conf permissions block of a
// worker's NATS user: queue.PermissionsFor(worker, tenants...), so that an
// operator adding a worker pool per tenant need not write it by hand
// (docs/operations.md, "Worker pools per tenant").
func newNATSPermissionsCmd() *cobra.Command {
	var tenants []string
	var prefix string
	cmd := &cobra.Command{
		Use:   "nats-permissions",
		Short: "Print the nats.conf permissions block of a worker's NATS user (a pool's with --tenants)",
		Long: `Print the permissions block of a worker's NATS user for a nats.conf users entry:
with --tenants, a worker pool's, which may serve and send control requests only on
those tenants' session subjects; without, a worker of every tenant's (the shipped one).`,
		Example: `  worker nats-permissions --tenants team-a`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, err := queue.PermissionsFor(queue.Config{Prefix: prefix}, queue.RoleWorker, tenants...)
			if err != nil {
				return usageErrorf("%v", err)
			}
			_, err = fmt.Fprintln(cmd.OutOrStdout(), natsauth.Conf(p, ""))
			return err
		},
	}
	cmd.Flags().StringSliceVar(&tenants, "tenants", nil, "the pool's tenants (default: every tenant)")
	cmd.Flags().StringVar(&prefix, "prefix", "", "the fleet's subject prefix (default agentfleet)")
	return cmd
}
