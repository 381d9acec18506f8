package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/agentfleet/agentfleet/cmd/internal/cli"
	"github.com/agentfleet/agentfleet/fleet/client"
)

// Client configuration: flags, else these environment variables.
const (
	EnvServer = cli.EnvServer
	EnvToken  = cli.EnvToken
)

// clientFlags are the flags every client subcommand shares.
type clientFlags struct {
	server, token string
}

func (f *clientFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.server, "server", "", "dispatcher URL (default $"+EnvServer+", else http://localhost:8080)")
	cmd.Flags().StringVar(&f.token, "token", "", "bearer token (default $"+EnvToken+")")
}

// client builds the API client from the flags and the environment.
func (f *clientFlags) client() (*client.Client, error) {
	server, token := f.server, f.token
	if server == "" {
		server = os.Getenv(EnvServer)
	}
	if server == "" {
		server = "http://localhost:8080"
	}
	if token == "" {
		token = os.Getenv(EnvToken)
	}
	c, err := client.New(server, token, nil)
	if err != nil {
		return nil, usageErrorf("--server: %v", err)
	}
	return c, nil
}

// taskArg parses a task id argument.
func taskArg(s string) (uuid.UUID, error) {
	id, err := uuid.Parse(s)
	if err != nil {
		return uuid.Nil, usageErrorf("%q is not a task id (a UUID such as 0192f3c4-...)", s)
	}
	return id, nil
}

// taskClient parses a task id argument and builds the API client: the first
// two steps of every command that acts on one task.
func (f *clientFlags) taskClient(arg string) (uuid.UUID, *client.Client, error) {
	id, err := taskArg(arg)
	if err != nil {
		return uuid.Nil, nil, err
	}
	cl, err := f.client()
	return id, cl, err
}

// apiFail turns a client error into a failed command.
func apiFail(err error) error { return failf("%v", err) }

func printJSON(w io.Writer, v any) {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

func exactArgs(n int, names string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) != n {
			return usageErrorf("want %s, got %d argument(s)", names, len(args))
		}
		return nil
	}
}

// tasks says "1 task" or "n tasks".
func tasks(n int64) string {
	if n == 1 {
		return "1 task"
	}
	return fmt.Sprintf("%d tasks", n)
}
