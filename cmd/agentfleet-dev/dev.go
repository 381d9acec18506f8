package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/agentfleet/agentfleet/cmd/internal/cli"
	"github.com/agentfleet/agentfleet/fleet/dev"
	"github.com/agentfleet/agentfleet/queue/embedded"
)

func init() { addCommand(newDevCmd) }

// devFlags are the flags of `agentfleet-dev dev`.
type devFlags struct {
	cfg          dev.Config
	demo         string
	exitWhenDone bool
}

func newDevCmd() *cobra.Command {
	var f devFlags
	cmd := &cobra.Command{
		Use:   "dev",
		Short: "Run a whole fleet in this process: NATS, SQLite, the API and dashboard, and workers",
		Long: `Run a whole fleet in one process, with no setup: an embedded NATS server with
JetStream, the SQLite store, the dispatcher's API and dashboard, and in-process
workers. Everything it keeps is in --data-dir, so a restart finds its tasks again.

The model: with ANTHROPIC_API_KEY, OPENAI_API_KEY or GEMINI_API_KEY set, that provider
(AGENTFLEET_MODEL names the model, else the profile's default); with
AGENTFLEET_LLM_BASE_URL and AGENTFLEET_MODEL, an OpenAI-compatible server such as
Ollama (http://localhost:11434/v1); with neither, or --simulated, a scripted
simulated model in this process, which dev mode says it uses.

The API listens on 127.0.0.1 and requires a bearer token: a random one generated at
start unless --token (or AGENTFLEET_TOKEN) sets one. The dashboard URL printed at start
carries it once (after #, so it is never sent to a server; the page keeps it for the tab);
the banner shows the export line for the CLI. --no-auth serves the API without a token
(loopback only); even then it refuses what a web page could send: a POST that is not
JSON, a request from another origin, a Host that is not localhost or an address.

--demo DIR also creates the sample repository of DIR (examples/demo) in a temporary
directory, submits DIR/backlog.jsonl and shows progress; the simulated model follows
DIR/plan.json. With --exit-when-done it exits once the backlog is done: 0 when every
task succeeded, 1 otherwise.`,
		Args: noArgsDev,
		RunE: func(c *cobra.Command, _ []string) error {
			if f.cfg.Token == "" && !f.cfg.NoAuth {
				f.cfg.Token = os.Getenv(cli.EnvToken)
			}
			// Traced as the OTEL_* environment says (off without an endpoint).
			stopTracing, err := cli.SetupTracing(c.Context(), "agentfleet-dev", "", cli.TracingConfig{}, cli.NewLogger("text", "warn", c.ErrOrStderr()))
			if err != nil {
				return failf("%v", err)
			}
			defer stopTracing()
			return runDev(c.Context(), f, c.OutOrStdout())
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.cfg.Addr, "addr", dev.DefaultAddr, "address of the API and dashboard")
	fl.IntVar(&f.cfg.NATSPort, "nats-port", embedded.DefaultPort, "port of the embedded NATS server on 127.0.0.1 (-1: any free port)")
	fl.StringVar(&f.cfg.DataDir, "data-dir", dev.DefaultDataDir, "directory for JetStream data, the SQLite database and workspaces")
	fl.IntVar(&f.cfg.Workers, "workers", dev.DefaultWorkers, "in-process workers")
	fl.IntVar(&f.cfg.Sessions, "sessions", dev.DefaultSessions, "sessions each worker runs at once")
	fl.StringVar(&f.cfg.Token, "token", "", "bearer token the API requires (default $AGENTFLEET_TOKEN, else a random one)")
	fl.BoolVar(&f.cfg.NoAuth, "no-auth", false, "serve the API without a token (loopback only; web pages still cannot drive it)")
	fl.BoolVar(&f.cfg.Simulated, "simulated", false, "use the simulated model even when a provider key is set")
	fl.StringVar(&f.demo, "demo", "", "run the demo of this directory (examples/demo): sample repository, backlog, simulated-model plan")
	fl.StringVar(&f.cfg.TraceUIURL, "trace-ui-url", "", "link each task's trace in this tracing UI from the dashboard's timeline, {trace_id} where its id goes (e.g. http://127.0.0.1:16686/trace/{trace_id})")
	fl.BoolVar(&f.exitWhenDone, "exit-when-done", false, "with --demo: exit when the backlog is done (status 1 if a task failed)")
	return cmd
}

func noArgsDev(_ *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usageErrorf("dev takes no arguments, got %q (did you mean --demo %s?)", args, args[0])
	}
	return nil
}

// runDev starts dev mode, prints how to use it, runs the demo when asked,
// and waits for ctx (Ctrl-C).
func runDev(ctx context.Context, f devFlags, out io.Writer) error {
	if f.exitWhenDone && f.demo == "" {
		return usageErrorf("--exit-when-done needs --demo")
	}
	if f.demo != "" {
		if err := dev.CheckDemoDir(f.demo); err != nil {
			return usageErrorf("%v", err)
		}
		plan, err := dev.LoadDemoPlan(f.demo)
		if err != nil {
			return failf("%v", err)
		}
		f.cfg.Plan = plan
	}
	fl, err := dev.Start(ctx, f.cfg)
	if err != nil {
		return failf("%v", err)
	}
	defer func() {
		fmt.Fprintln(out, "dev: stopping (workers get a few seconds to reach a checkpoint)")
		if err := fl.Close(); err != nil {
			fmt.Fprintln(out, "dev: stopping:", err)
		}
	}()
	printDevBanner(out, fl)
	if f.demo != "" {
		code, err := runDevDemo(ctx, fl, f, out)
		if err != nil || f.exitWhenDone {
			return exitCode(code, err)
		}
		fmt.Fprintf(out, "\ndemo: the dashboard stays up at %s ; press Ctrl-C to stop\n", fl.DashboardURL())
	}
	<-ctx.Done()
	return nil
}

func printDevBanner(out io.Writer, fl *dev.Fleet) {
	workers, sessions := fl.Workers()
	auth := "  API token  none (--no-auth): anything on this machine may use the API\n"
	tokenArg := ""
	if fl.Token() != "" {
		auth = "  API token  export " + cli.EnvToken + "=" + fl.Token() + "\n"
		tokenArg = " --token $" + cli.EnvToken
	}
	fmt.Fprintf(out, `agentfleet dev mode
  dashboard  %[10]s
  API        %[1]s/v1/  (docs/api.md)
%[11]s  NATS       %[2]s  (JetStream data in %[3]s;
             users and passwords, new at each start, in %[12]s/{worker,observer}.env)
  store      SQLite %[4]s
  workers    %[5]d in this process, %[6]d sessions each
  model      %[7]s
  sandbox    %[9]s

submit a task (after the export line above):
  dispatcher submit --server %[1]s%[8]s 'Fix the failing test in stats/'
  dispatcher submit --server %[1]s%[8]s --file backlog.jsonl
or POST a spec to %[1]s/v1/tasks; watch it in the dashboard or with dispatcher tail <task-id>.
Ctrl-C stops dev mode.

`, fl.URL(), fl.NATSURL(), filepath.Join(fl.DataDir(), "nats"), filepath.Join(fl.DataDir(), "agentfleet.db"),
		workers, sessions, fl.Model(), tokenArg, fl.Sandbox(), fl.DashboardURL(), auth, filepath.Join(fl.DataDir(), "nats-auth"))
}

// runDevDemo runs the backlog of the demo directory and returns the exit
// status it calls for.
func runDevDemo(ctx context.Context, fl *dev.Fleet, f devFlags, out io.Writer) (int, error) {
	c, err := fl.Client()
	if err != nil {
		return 1, err
	}
	if !fl.Simulated() {
		fmt.Fprintln(out, "demo: a real model works on the backlog; its tasks may take minutes and cost tokens")
	}
	res, err := dev.RunDemo(ctx, c, dev.DemoOptions{Dir: f.demo, Out: out})
	if err != nil {
		return 1, err
	}
	if n := res.Failed(); n > 0 {
		return 1, fmt.Errorf("demo: %d task(s) did not succeed; see %s/ for their events", n, fl.URL())
	}
	return 0, nil
}

func exitCode(code int, err error) error {
	switch {
	case err != nil && ctxErr(err):
		return nil // Ctrl-C during the demo
	case err != nil:
		return failf("%v", err)
	case code != 0:
		return &cli.ExitError{Code: code} // no message: the demo printed its result
	}
	return nil
}

func ctxErr(err error) bool {
	return errors.Is(err, context.Canceled)
}
