package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentfleet/agentfleet/execenv"
	"github.com/agentfleet/agentfleet/internal/outbound"
	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/tools"
	"github.com/agentfleet/agentfleet/tools/mcp"
)

func init() { addCommand(newMCPCmd) }

// mcpFlags say which server to reach and how.
type mcpFlags struct {
	name    string
	dir     string
	url     string
	headers []string
	private []string
	timeout time.Duration
}

func (f *mcpFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.name, "name", "cli", "server name in the tool names (mcp__<name>__<tool>)")
	cmd.Flags().StringVar(&f.dir, "dir", ".", "working directory of a stdio server")
	cmd.Flags().StringVar(&f.url, "url", "", "streamable-HTTP endpoint instead of a command")
	cmd.Flags().StringArrayVar(&f.headers, "header", nil, `HTTP header "Name=value"; "${secret:VAR}" reads the environment variable VAR`)
	cmd.Flags().StringArrayVar(&f.private, "allow-private", nil, "internal address or CIDR prefix the --url server may be at (as outbound_allow_private); repeatable")
	cmd.Flags().DurationVar(&f.timeout, "timeout", mcp.DefaultStartTimeout, "start-up and call timeout")
}

func newMCPCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Inspect an MCP server as a session would see it",
		Long: `List the tools of an MCP server as the model sees them, or call one. The server is
a stdio command given after --, run in --dir like a task's server, or a
streamable-HTTP endpoint (--url). Exit status: 0 success, 1 the server failed or
the call gave an error result, 2 bad usage.`,
	}
	cmd.AddCommand(newMCPToolsCmd(), newMCPCallCmd())
	return cmd
}

func newMCPToolsCmd() *cobra.Command {
	var f mcpFlags
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "tools [flags] -- CMD [ARGS...]",
		Short: "Print the tools of an MCP server as the model would see them",
		Example: `  worker mcp tools -- npx -y @modelcontextprotocol/server-everything stdio
  worker mcp tools --url http://localhost:8080/mcp --allow-private 127.0.0.1 --header 'Authorization=Bearer ${secret:TOKEN}'`,
		RunE: func(cmd *cobra.Command, args []string) error {
			client, env, err := startMCP(cmd, f, args)
			if err != nil {
				return err
			}
			defer func() { _ = env.Cleanup(cmd.Context()) }()
			defer func() { _ = client.Close() }()
			return printTools(cmd.OutOrStdout(), client.Tools(), asJSON)
		},
	}
	f.add(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the definitions as JSON (name, description, parameters)")
	return cmd
}

func newMCPCallCmd() *cobra.Command {
	var f mcpFlags
	var tool, args string
	cmd := &cobra.Command{
		Use:     "call --tool NAME [--args JSON] [flags] -- CMD [ARGS...]",
		Short:   "Call one tool of an MCP server and print what the model would see",
		Example: `  worker mcp call --tool echo --args '{"message":"hi"}' -- npx -y @modelcontextprotocol/server-everything stdio`,
		RunE: func(cmd *cobra.Command, pos []string) error {
			if tool == "" {
				return usageErrorf("--tool is required: name the server's tool (echo) or the model's name (mcp__cli__echo)")
			}
			rawArgs, err := toolArgs(cmd.InOrStdin(), "", args)
			if err != nil {
				return err
			}
			client, env, err := startMCP(cmd, f, pos)
			if err != nil {
				return err
			}
			defer func() { _ = env.Cleanup(cmd.Context()) }()
			defer func() { _ = client.Close() }()
			return callMCP(cmd, client, env, f.name, tool, rawArgs)
		},
	}
	f.add(cmd)
	cmd.Flags().StringVar(&tool, "tool", "", "tool to call")
	cmd.Flags().StringVar(&args, "args", "", `arguments as a JSON object ("-" reads them from stdin)`)
	return cmd
}

// startMCP starts the one server the flags and arguments describe.
func startMCP(cmd *cobra.Command, f mcpFlags, args []string) (*mcp.Client, execenv.Environment, error) {
	cfg, err := f.server(args)
	if err != nil {
		return nil, nil, err
	}
	dir, err := filepath.Abs(f.dir)
	if err != nil {
		return nil, nil, usageErrorf("--dir %q: %v", f.dir, err)
	}
	if info, err := os.Stat(dir); err != nil || !info.IsDir() {
		return nil, nil, usageErrorf("--dir %q is not a directory", f.dir)
	}
	private, err := outbound.ParsePrefixes("--allow-private", f.private)
	if err != nil {
		return nil, nil, usageErrorf("%v", err)
	}
	env, err := execenv.NewLocal(execenv.LocalConfig{WorkingDir: dir})
	if err != nil {
		return nil, nil, usageErrorf("%v", err)
	}
	client, failed := mcp.Start(cmd.Context(), []mcp.ServerConfig{cfg}, mcp.Options{Env: env, Secrets: mcp.Secrets{AllowEnv: true},
		AllowPrivate: private})
	if len(failed) > 0 {
		_ = client.Close()
		_ = env.Cleanup(cmd.Context())
		return nil, nil, &exitError{code: 1, msg: failed[0].Error()}
	}
	return client, env, nil
}

// server builds the server configuration from the flags and the command.
func (f *mcpFlags) server(args []string) (mcp.ServerConfig, error) {
	cfg := mcp.ServerConfig{Name: f.name, URL: f.url, StartTimeout: f.timeout, CallTimeout: f.timeout}
	switch {
	case f.url == "" && len(args) == 0:
		return cfg, usageErrorf("give the server's command after -- (worker mcp tools -- npx -y PACKAGE) or --url")
	case f.url != "" && len(args) > 0:
		return cfg, usageErrorf("give either --url or a command after --, not both")
	case len(args) > 0:
		cfg.Command, cfg.Args = args[0], args[1:]
	}
	for _, h := range f.headers {
		k, v, ok := strings.Cut(h, "=")
		if !ok || k == "" {
			return cfg, usageErrorf("--header %q must be Name=value", h)
		}
		if cfg.Headers == nil {
			cfg.Headers = map[string]string{}
		}
		cfg.Headers[k] = v
	}
	if err := cfg.Validate("server"); err != nil {
		return cfg, usageErrorf("%v", err)
	}
	return cfg, nil
}

// printTools writes the definitions the model would get.
func printTools(w io.Writer, list []tools.Tool, asJSON bool) error {
	defs := make([]llm.ToolDefinition, len(list))
	for i, t := range list {
		defs[i] = t.Definition()
	}
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(defs)
	}
	for _, d := range defs {
		var schema any
		_ = json.Unmarshal(d.Parameters, &schema)
		params, _ := json.MarshalIndent(schema, "    ", "  ")
		desc := strings.ReplaceAll(strings.ReplaceAll(d.Description, "\n\n", "\n"), "\n", "\n    ")
		fmt.Fprintf(w, "%s\n    %s\n    parameters: %s\n\n", d.Name, desc, params)
	}
	if len(defs) == 0 {
		fmt.Fprintln(w, "The server offers no tools.")
	}
	return nil
}

// callMCP runs one call through the tools pipeline, as a session would.
func callMCP(cmd *cobra.Command, client *mcp.Client, env execenv.Environment, server, tool string, args json.RawMessage) error {
	reg := tools.NewRegistry(client.Tools()...)
	name := tool
	if _, ok := reg.Get(name); !ok {
		name = mcp.ToolName(server, tool)
	}
	if _, ok := reg.Get(name); !ok {
		return usageErrorf("the server has no tool %q; it offers: %s", tool, strings.Join(reg.Names(), ", "))
	}
	return printToolCall(cmd, reg, env, name, args)
}
