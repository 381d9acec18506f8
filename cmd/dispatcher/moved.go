package main

import (
	"github.com/spf13/cobra"
)

func init() {
	addCommand(func() *cobra.Command { return newMovedCmd("dev") })
	addCommand(func() *cobra.Command { return newMovedCmd("bench") })
}

// newMovedCmd is a subcommand that moved to agentfleet-dev, so that this
// production binary links neither the worker nor the simulated model. It
// is hidden and only says where the command went: exit status 2, whatever
// the arguments.
func newMovedCmd(name string) *cobra.Command {
	return &cobra.Command{
		Use:                name,
		Short:              "Moved: run `agentfleet-dev " + name + "`",
		Hidden:             true,
		DisableFlagParsing: true,
		RunE: func(*cobra.Command, []string) error {
			return usageErrorf("%[1]s moved out of the dispatcher: run `agentfleet-dev %[1]s` with the same flags "+
				"(make build puts it in bin/; or go run ./cmd/agentfleet-dev %[1]s)", name)
		},
	}
}
