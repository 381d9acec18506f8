package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentfleet/agentfleet/execenv"
	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/tools"
)

func init() { addCommand(newToolCmd) }

type toolFlags struct {
	dir  string
	args string
	web  bool
	sandboxFlags
}

func newToolCmd() *cobra.Command {
	var f toolFlags
	cmd := &cobra.Command{
		Use:   "tool NAME [--dir DIR] [--args JSON]",
		Short: "Run one core tool against a directory and print what the model would see",
		Long: `Run one core tool (read_file, shell, apply_patch, ...) in a local environment
rooted at --dir and print its model-facing result. --args is the JSON object of
arguments ("-" reads it from stdin). For apply_patch the raw patch may come on
stdin instead. With --sandbox the tool runs exactly as a fleet task's would:
commands under bubblewrap, file tools kept in --dir, within the sandbox
settings of the worker configuration (--config, AGENTFLEET_SANDBOX_*), the
task's sandbox spec given by --network and --allow-host. Exit status: 0
success, 1 error result, 2 bad usage.`,
		Example: `  worker tool read_file --dir . --args '{"file_path":"go.mod"}'
  worker tool apply_patch --dir . < change.patch
  worker tool shell --sandbox --dir . --args '{"command":"cat /etc/shadow; ls ~"}'`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageErrorf("tool takes exactly one tool name, got %d arguments; run `worker tool --help`", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error { return runTool(cmd, args[0], f) },
	}
	cmd.Flags().StringVar(&f.dir, "dir", ".", "directory the tool works in")
	cmd.Flags().StringVar(&f.args, "args", "", `tool arguments as a JSON object ("-" reads them from stdin)`)
	cmd.Flags().BoolVar(&f.web, "web", false, "also offer web_fetch (network access)")
	f.sandboxFlags.add(cmd)
	return cmd
}

func runTool(cmd *cobra.Command, name string, f toolFlags) error {
	reg := tools.Core()
	if f.web {
		wf, err := tools.WebFetch(tools.WebFetchConfig{Enabled: true})
		if err != nil {
			return err
		}
		reg.Register(wf)
	}
	if _, ok := reg.Get(name); !ok {
		return usageErrorf("unknown tool %q; available: %s", name, strings.Join(reg.Names(), ", "))
	}
	rawArgs, err := toolArgs(cmd.InOrStdin(), name, f.args)
	if err != nil {
		return err
	}
	dir, err := filepath.Abs(f.dir)
	if err != nil {
		return usageErrorf("--dir %q: %v", f.dir, err)
	}
	if info, err := os.Stat(dir); err != nil || !info.IsDir() {
		return usageErrorf("--dir %q is not a directory", f.dir)
	}
	env, err := f.environment(dir, cmd.ErrOrStderr())
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	if err := env.Initialize(ctx); err != nil {
		return &exitError{code: 1, msg: err.Error()}
	}
	defer func() { _ = env.Cleanup(ctx) }()
	return printToolCall(cmd, reg, env, name, rawArgs)
}

// printToolCall runs one call of tool name through reg, as a session
// would, prints its result and exits 1 when the result is an error.
func printToolCall(cmd *cobra.Command, reg *tools.Registry, env execenv.Environment, name string, args json.RawMessage) error {
	res := reg.Execute(cmd.Context(), llm.ToolCall{ID: "cli", Name: name, Arguments: args}, env, tools.ExecOptions{})
	out := cmd.OutOrStdout()
	fmt.Fprint(out, res.Content)
	if !strings.HasSuffix(res.Content, "\n") {
		fmt.Fprintln(out)
	}
	if res.IsError {
		return &exitError{code: 1}
	}
	return nil
}

// toolArgs returns the JSON arguments from --args, stdin ("-"), or for
// apply_patch a raw patch on stdin.
func toolArgs(stdin io.Reader, name, flag string) (json.RawMessage, error) {
	switch {
	case flag == "-":
		data, err := io.ReadAll(stdin)
		if err != nil {
			return nil, usageErrorf("reading arguments from stdin: %v", err)
		}
		flag = string(data)
	case flag == "" && name == "apply_patch":
		if isTerminal(stdin) {
			return nil, usageErrorf("apply_patch needs a patch: pass --args '{\"patch\": ...}' or pipe the patch on stdin")
		}
		data, err := io.ReadAll(stdin)
		if err != nil {
			return nil, usageErrorf("reading the patch from stdin: %v", err)
		}
		return json.Marshal(tools.ApplyPatchParams{Patch: string(data)})
	case flag == "":
		flag = "{}"
	}
	if !json.Valid([]byte(flag)) {
		return nil, usageErrorf("--args is not valid JSON: %.200s", flag)
	}
	return json.RawMessage(flag), nil
}

// isTerminal reports whether r is an interactive terminal.
func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	info, err := f.Stat()
	return err == nil && info.Mode()&os.ModeCharDevice != 0
}
