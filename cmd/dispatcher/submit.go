package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/agentfleet/agentfleet/cmd/internal/cli"
	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/api"
	"github.com/agentfleet/agentfleet/fleet/client"
	"github.com/agentfleet/agentfleet/store"
)

func init() { addCommand(newSubmitCmd) }

// BacklogLabel is the label submit puts on every task of a backlog, so that
// its progress can be counted.
const BacklogLabel = "backlog"

type submitFlags struct {
	clientFlags
	runAt       string // --run-at: a time or a duration from now (rounds_cmds.go)
	file        string
	skipInvalid bool
	batch       int
	parallel    int
	noWait      bool
	asJSON      bool
	poll        time.Duration
	spec        fleet.TaskSpec
	labels      []string
	wallTime    time.Duration
}

func newSubmitCmd() *cobra.Command {
	var f submitFlags
	cmd := &cobra.Command{
		Use:   "submit [PROMPT] | --file BACKLOG.jsonl",
		Short: "Submit one task, or a JSONL backlog with a progress bar",
		Long: `Submit one task from PROMPT and flags, or a backlog: a JSONL file (--file, "-" for stdin)
with one task spec per line (see docs/api.md; blank lines and lines starting with # are skipped).

One task: submit prints its id, then follows its events as tail does until it ends (--no-wait
or --json: print and return at once). Exit status 1 when it failed or was cancelled.

The whole backlog is checked first: a malformed or invalid line is reported with its line
number and nothing is submitted, unless --skip-invalid (then the bad lines are reported and
skipped). Tasks go in batches of --batch, --parallel requests at a time, each labelled backlog=<id>; submit then shows
submitted, running, done and failed until every task has finished (--no-wait returns at
once) and prints a summary. Exit status 1 when a task failed or was cancelled.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if f.file != "" {
				if len(args) > 0 {
					return usageErrorf("give either PROMPT or --file, not both")
				}
				return submitBacklog(c, &f)
			}
			if len(args) == 0 {
				return usageErrorf("give a PROMPT or --file BACKLOG.jsonl")
			}
			f.spec.Prompt = args[0]
			return submitOne(c, &f)
		},
	}
	f.clientFlags.register(cmd)
	fl := cmd.Flags()
	fl.StringVarP(&f.file, "file", "f", "", "JSONL backlog of task specs (- for stdin)")
	fl.BoolVar(&f.skipInvalid, "skip-invalid", false, "skip invalid backlog lines instead of submitting nothing")
	fl.IntVar(&f.batch, "batch", 1000, "tasks per request (at most 10000)")
	fl.IntVar(&f.parallel, "parallel", 4, "backlog requests in flight at once")
	fl.BoolVar(&f.noWait, "no-wait", false, "return once submitted instead of following progress")
	fl.BoolVar(&f.asJSON, "json", false, "print the submitted task(s) as JSON")
	fl.DurationVar(&f.poll, "poll", time.Second, "how often progress is refreshed")
	fl.StringVar(&f.spec.Profile, "profile", "", "openai, anthropic or gemini (default: the dispatcher's)")
	fl.StringVar(&f.spec.Model, "model", "", "model (default: the worker's for the profile)")
	fl.StringVar(&f.spec.ReasoningEffort, "effort", "", "reasoning effort: minimal, low, medium, high, xhigh")
	fl.StringVar(&f.spec.Queue, "queue", "", "queue (default \"default\")")
	fl.IntVar(&f.spec.Priority, "priority", 0, "priority, higher first")
	fl.StringVar(&f.spec.IdempotencyKey, "key", "", "idempotency key: a repeated submit returns the first task")
	fl.StringVar(&f.runAt, "run-at", "", "start at this time (RFC 3339) or after this duration (2h), not before; implies --no-wait")
	fl.StringArrayVar(&f.labels, "label", nil, "label key=value (repeatable)")
	fl.IntVar(&f.spec.Limits.MaxTurns, "max-turns", 0, "turn limit (0: none)")
	fl.IntVar(&f.spec.Limits.MaxToolRounds, "max-tool-rounds", 0, "tool rounds per input (0: the session default)")
	fl.DurationVar(&f.wallTime, "wall-time", 0, "wall-clock limit such as 30m (0: none)")
	fl.Int64Var(&f.spec.Limits.MaxTokens, "max-tokens", 0, "token limit (0: none)")
	fl.Float64Var(&f.spec.Limits.MaxCostUSD, "max-cost", 0, "cost limit in USD (0: none)")
	fl.StringVar(&f.spec.Environment.Repo, "repo", "", "git repository to clone into the workspace")
	fl.StringVar(&f.spec.Environment.Ref, "ref", "", "branch, tag or commit of --repo")
	return cmd
}

func submitOne(c *cobra.Command, f *submitFlags) error {
	f.spec.Limits.WallTime = fleet.Duration(f.wallTime)
	if f.runAt != "" {
		at, err := parseRunAt(f.runAt, time.Now())
		if err != nil {
			return err
		}
		f.spec.RunAt, f.noWait = &at, true
	}
	for _, l := range f.labels {
		k, v, ok := strings.Cut(l, "=")
		if !ok || k == "" {
			return usageErrorf("--label %q must be key=value", l)
		}
		if f.spec.Labels == nil {
			f.spec.Labels = map[string]string{}
		}
		f.spec.Labels[k] = v
	}
	if err := precheck(f.spec); err != nil {
		return usageErrorf("%v", err)
	}
	cl, err := f.client()
	if err != nil {
		return err
	}
	res, err := cl.Submit(c.Context(), f.spec)
	if err != nil {
		return apiFail(err)
	}
	if f.asJSON {
		printJSON(c.OutOrStdout(), res)
		return nil
	}
	note := ""
	if res.Existing {
		note = " (existing: the idempotency key was used before)"
	}
	fmt.Fprintf(c.OutOrStdout(), "%s%s\n", res.Task.ID, note)
	if f.noWait {
		return nil
	}
	return followTask(c, cl, res.Task.ID)
}

// followTask prints the task's events until it ends; a task that did not
// succeed makes the exit status 1. When following stops before the task
// ends, it says so and how to go on following: an interrupt (the context
// ended) leaves the exit status 0, as for a backlog; a stream that broke or
// ended early (a dispatcher restarted, a proxy closed it) makes it 1, since
// how the task ends is unknown.
func followTask(c *cobra.Command, cl *client.Client, id uuid.UUID) error {
	end, err := tailTask(c, cl, id)
	switch {
	case end != nil && end.State == store.TaskSucceeded:
		return nil
	case end != nil:
		return &cli.ExitError{Code: 1} // no message: the task's end is printed
	case c.Context().Err() != nil:
		fmt.Fprintf(c.ErrOrStderr(), "stopped following; task %s goes on (dispatcher tail %s)\n", id, id)
		return nil //nolint:nilerr // the user stopped following; the task goes on
	case err != nil:
		return failf("%v; task %s is submitted and may be running: follow it with `dispatcher tail %s`", err, id, id)
	default:
		return failf("the event stream of task %s ended before the task did (a dispatcher restarted, or a proxy "+
			"closed the connection); it may still be running: follow it with `dispatcher tail %s`", id, id)
	}
}

// tailTask prints the task's events until its end, which it returns; the
// end is nil when the stream or the context ended first.
func tailTask(c *cobra.Command, cl *client.Client, id uuid.UUID) (*api.StreamEnd, error) {
	s, err := cl.Events(c.Context(), id, client.StreamOptions{})
	if err != nil {
		return nil, err
	}
	defer func() { _ = s.Close() }()
	return tail(c, s, false)
}

// precheck validates a spec locally; the profile is left to the dispatcher,
// which knows which ones it serves.
func precheck(s fleet.TaskSpec) error {
	if s.Profile == "" {
		s.Profile = "default"
	}
	return s.ValidateSubmission(s.Profile)
}

// backlogLine is one line of a backlog.
type backlogLine struct {
	line int
	spec fleet.TaskSpec
}

// readBacklog parses and checks every line. It returns the good lines and
// one message per bad line.
func readBacklog(r io.Reader) (good []backlogLine, bad []string, err error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	n := 0
	for sc.Scan() {
		n++
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 || text[0] == '#' {
			continue
		}
		var s fleet.TaskSpec
		dec := json.NewDecoder(bytes.NewReader(text))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&s); err != nil {
			bad = append(bad, fmt.Sprintf("line %d: not a task spec: %v", n, strings.TrimPrefix(err.Error(), "json: ")))
			continue
		}
		if err := precheck(s); err != nil {
			bad = append(bad, fmt.Sprintf("line %d: %v", n, err))
			continue
		}
		good = append(good, backlogLine{line: n, spec: s})
	}
	if err := sc.Err(); err != nil {
		return nil, nil, fmt.Errorf("line %d: %w", n+1, err)
	}
	return good, bad, nil
}

func openBacklog(c *cobra.Command, name string) (io.ReadCloser, error) {
	if name == "-" {
		return io.NopCloser(c.InOrStdin()), nil
	}
	return os.Open(name)
}

func submitBacklog(c *cobra.Command, f *submitFlags) error {
	if f.batch < 1 || f.batch > api.MaxBatch {
		return usageErrorf("--batch must be between 1 and %d, got %d", api.MaxBatch, f.batch)
	}
	if f.parallel < 1 {
		return usageErrorf("--parallel must be >= 1, got %d", f.parallel)
	}
	r, err := openBacklog(c, f.file)
	if err != nil {
		return failf("backlog: %v", err)
	}
	good, bad, err := readBacklog(r)
	_ = r.Close()
	if err != nil {
		return failf("backlog %s: %v", f.file, err)
	}
	errOut := c.ErrOrStderr()
	for _, b := range bad {
		fmt.Fprintf(errOut, "%s: %s\n", f.file, b)
	}
	if len(bad) > 0 && !f.skipInvalid {
		return failf("%s has %d invalid line(s); nothing was submitted (fix them, or pass --skip-invalid to submit the rest)", f.file, len(bad))
	}
	if len(good) == 0 {
		return failf("%s holds no task to submit", f.file)
	}
	cl, err := f.client()
	if err != nil {
		return err
	}
	backlog := uuid.NewString()[:8]
	for i := range good {
		s := &good[i].spec
		if s.Labels == nil {
			s.Labels = map[string]string{}
		}
		s.Labels[BacklogLabel] = backlog
	}
	prog := newProgress(errOut, len(good))
	ids, err := sendBatches(c.Context(), cl, good, f.batch, f.parallel, prog)
	if err != nil {
		return err
	}
	if f.asJSON {
		printJSON(c.OutOrStdout(), map[string]any{"backlog": backlog, "tasks": ids})
	}
	if f.noWait {
		prog.finish()
		fmt.Fprintf(c.OutOrStdout(), "submitted %s (label %s=%s)\n", tasks(int64(len(ids))), BacklogLabel, backlog)
		return nil
	}
	return follow(c.Context(), cl, backlog, f.poll, prog, c.OutOrStdout())
}

// follow polls the backlog's counts until every task has finished.
func follow(ctx context.Context, cl *client.Client, backlog string, every time.Duration, prog *progress, out io.Writer) error {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		counts, err := cl.CountsFiltered(ctx, client.ListFilter{Labels: map[string]string{BacklogLabel: backlog}})
		if err == nil {
			prog.counts = counts
			prog.draw(false)
			if prog.finished() {
				break
			}
		}
		select {
		case <-ctx.Done():
			prog.finish()
			fmt.Fprintf(out, "stopped following; the tasks go on (label %s=%s)\n", BacklogLabel, backlog)
			return nil
		case <-tick.C:
		}
	}
	prog.finish()
	c := prog.counts
	fmt.Fprintf(out, "%s in %s: %d succeeded, %d failed, %d cancelled (label %s=%s)\n",
		tasks(int64(prog.total)), time.Since(prog.start).Round(time.Millisecond),
		c[store.TaskSucceeded], c[store.TaskFailed], c[store.TaskCancelled], BacklogLabel, backlog)
	if c[store.TaskFailed]+c[store.TaskCancelled] > 0 {
		return failf("")
	}
	return nil
}
