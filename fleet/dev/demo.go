package dev

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/api"
	"github.com/agentfleet/agentfleet/fleet/client"
	"github.com/agentfleet/agentfleet/store"
)

// A demo directory (examples/demo) holds:
//
//	repo/          the sample repository, copied and committed to a fresh git repository,
//	               cloned bare: the tasks clone the bare one and deliver their branches there
//	backlog.jsonl  one task spec per line; a spec without an environment gets the sample repository
//	               and a delivery of its branch to it (the file stays submittable without one)
//	plan.json      the simulated model's script for those tasks (see SimPlan)
const (
	demoRepoDir  = "repo"
	demoBacklog  = "backlog.jsonl"
	demoPlanFile = "plan.json"
	demoAuthor   = "agentfleet demo <demo@agentfleet.invalid>"
)

// LoadDemoPlan reads the simulated-model plan of a demo directory.
func LoadDemoPlan(dir string) (SimPlan, error) {
	return LoadSimPlan(filepath.Join(dir, demoPlanFile))
}

// DemoOptions configure RunDemo.
type DemoOptions struct {
	// Dir is the demo directory (examples/demo).
	Dir string
	// Out receives the progress and the summary.
	Out io.Writer
	// Poll is how often progress is read (default 500 ms).
	Poll time.Duration
}

// DemoResult is how a demo backlog ended.
type DemoResult struct {
	Repo  string         // the sample repository the tasks cloned (bare; their branches are delivered there)
	Roots []api.TaskView // the submitted tasks, in backlog order, final
	Tasks []api.TaskView // every task of their trees, final
}

// Failed counts the tasks of the demo that did not succeed.
func (r DemoResult) Failed() int {
	n := 0
	for _, t := range r.Tasks {
		if t.State != store.TaskSucceeded {
			n++
		}
	}
	return n
}

// RunDemo creates the sample repository in a temporary directory, submits
// the backlog through the API, prints progress until every task of every
// tree is final, and returns the outcome. It does not stop the fleet.
func RunDemo(ctx context.Context, c *client.Client, o DemoOptions) (DemoResult, error) {
	if o.Poll <= 0 {
		o.Poll = 500 * time.Millisecond
	}
	specs, err := readDemoBacklog(filepath.Join(o.Dir, demoBacklog))
	if err != nil {
		return DemoResult{}, err
	}
	work, err := makeDemoRepo(ctx, filepath.Join(o.Dir, demoRepoDir))
	if err != nil {
		return DemoResult{}, err
	}
	repo := work + ".git"
	if err := demoGit(ctx, "", "clone", "--quiet", "--bare", work, repo); err != nil {
		return DemoResult{}, err
	}
	res := DemoResult{Repo: repo}
	for i := range specs {
		if specs[i].Environment == (fleet.Environment{}) {
			specs[i].Environment = fleet.Environment{Repo: repo}
			if specs[i].Delivery == nil {
				specs[i].Delivery = &fleet.Delivery{Author: demoAuthor}
			}
		}
	}
	fmt.Fprintf(o.Out, "demo: sample repository %s (a copy of %s, committed; bare clone %s receives the branches)\n",
		work, filepath.Join(o.Dir, demoRepoDir), repo)
	batch, err := c.SubmitBatch(ctx, specs)
	if err != nil {
		return res, fmt.Errorf("demo: submitting the backlog: %w", err)
	}
	fmt.Fprintf(o.Out, "demo: submitted %d tasks from %s\n", len(batch.Tasks), filepath.Join(o.Dir, demoBacklog))
	roots := make([]uuid.UUID, len(batch.Tasks))
	for i, t := range batch.Tasks {
		roots[i] = t.ID
	}
	start := time.Now()
	tick := time.NewTicker(o.Poll)
	defer tick.Stop()
	last := ""
	for {
		trees, err := readTrees(ctx, c, roots)
		if err != nil {
			return res, err
		}
		line, done := progressLine(trees, len(roots))
		if line != last {
			fmt.Fprintf(o.Out, "[%5.1fs] %s\n", time.Since(start).Seconds(), line)
			last = line
		}
		if done {
			res.Roots, res.Tasks = flatten(trees)
			printDemoSummary(ctx, c, o.Out, res, time.Since(start))
			return res, nil
		}
		select {
		case <-ctx.Done():
			return res, ctx.Err()
		case <-tick.C:
		}
	}
}

// readDemoBacklog reads a JSONL backlog strictly: a line that is not a task
// spec is reported with its number, and nothing is returned.
func readDemoBacklog(path string) ([]fleet.TaskSpec, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	defer func() { _ = f.Close() }()
	var specs []fleet.TaskSpec
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), fleet.MaxPromptBytes*2)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		var spec fleet.TaskSpec
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&spec); err != nil {
			return nil, fmt.Errorf("demo: %s line %d is not a task spec: %v", path, n, err)
		}
		specs = append(specs, spec)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("demo: reading %s: %w", path, err)
	}
	if len(specs) == 0 {
		return nil, fmt.Errorf("demo: %s has no tasks", path)
	}
	return specs, nil
}

// makeDemoRepo copies the template into a new temporary directory and
// commits it, so tasks can clone it and their diffs show their changes.
func makeDemoRepo(ctx context.Context, template string) (string, error) {
	if _, err := os.Stat(filepath.Join(template, "go.mod")); err != nil {
		return "", fmt.Errorf("demo: %s is not the sample repository (no go.mod): %w", template, err)
	}
	dir, err := os.MkdirTemp("", "agentfleet-demo-repo-")
	if err != nil {
		return "", err
	}
	if err := os.CopyFS(dir, os.DirFS(template)); err != nil {
		return "", fmt.Errorf("demo: copying %s: %w", template, err)
	}
	for _, args := range [][]string{
		{"init", "--quiet", "--initial-branch=main"},
		{"add", "--all"},
		{"-c", "user.name=agentfleet demo", "-c", "user.email=demo@agentfleet.invalid", "commit", "--quiet", "-m", "the sample repository"},
	} {
		if err := demoGit(ctx, dir, args...); err != nil {
			return "", err
		}
	}
	return dir, nil
}

// demoGit runs git in dir.
func demoGit(ctx context.Context, dir string, args ...string) error {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("demo: git %s in %s: %v: %s (is git installed?)", args[0], dir, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// readTrees reads the tree of every root.
func readTrees(ctx context.Context, c *client.Client, roots []uuid.UUID) ([]api.TaskTree, error) {
	trees := make([]api.TaskTree, len(roots))
	for i, id := range roots {
		t, err := c.Tree(ctx, id)
		if err != nil {
			return nil, fmt.Errorf("demo: reading the tree of task %s: %w", id, err)
		}
		trees[i] = t
	}
	return trees, nil
}

// progressLine counts the tasks by state: "4 tasks + 2 subagents: 1
// running, 3 succeeded". done is true once every task is final.
func progressLine(trees []api.TaskTree, roots int) (string, bool) {
	counts := map[store.TaskState]int{}
	total := 0
	done := true
	for _, tr := range trees {
		for _, t := range tr.Tasks {
			counts[t.State]++
			total++
			done = done && t.State.Terminal()
		}
	}
	parts := make([]string, 0, len(counts))
	for _, s := range store.TaskStates {
		if counts[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[s], s))
		}
	}
	return fmt.Sprintf("%d tasks + %d subagents: %s", roots, total-roots, strings.Join(parts, ", ")), done
}

func flatten(trees []api.TaskTree) (roots, all []api.TaskView) {
	for _, tr := range trees {
		for _, t := range tr.Tasks {
			if t.ID == tr.RootID {
				roots = append(roots, t)
			}
			all = append(all, t)
		}
	}
	return roots, all
}

// printDemoSummary prints each task with its outcome and the files its diff
// touches.
func printDemoSummary(ctx context.Context, c *client.Client, out io.Writer, res DemoResult, took time.Duration) {
	fmt.Fprintf(out, "\ndemo: backlog done in %.1fs: %d of %d tasks succeeded\n", took.Seconds(), len(res.Tasks)-res.Failed(), len(res.Tasks))
	for _, root := range res.Roots {
		printDemoTask(ctx, c, out, root, "  ")
		for _, t := range res.Tasks {
			if t.ParentID == root.ID {
				printDemoTask(ctx, c, out, t, "      subagent ")
			}
		}
	}
}

func printDemoTask(ctx context.Context, c *client.Client, out io.Writer, t api.TaskView, indent string) {
	var spec fleet.TaskSpec
	_ = json.Unmarshal(t.Spec, &spec)
	fmt.Fprintf(out, "%s%-9s %s  %s\n", indent, t.State, shortTaskID(t.ID), firstLineOf(spec.Prompt, 80))
	pad := strings.Repeat(" ", len(indent)+10)
	if r, ok := t.TaskResult(); ok && r.FinalText != "" {
		fmt.Fprintf(out, "%s-> %s\n", pad, firstLineOf(r.FinalText, 110))
	}
	if t.Error != "" {
		fmt.Fprintf(out, "%s!! %s\n", pad, firstLineOf(t.Error, 110))
	}
	if t.ParentID != uuid.Nil {
		return // a subagent's changes are in its parent's workspace and diff
	}
	if diff, _, err := c.Artifact(ctx, t.ID, "diff", ""); err == nil {
		fmt.Fprintf(out, "%sdiff: %s\n", pad, diffFiles(diff))
	}
	if r, ok := t.TaskResult(); ok {
		printDemoOutcome(out, pad, r)
	}
}

// printDemoOutcome prints a task's checks and its delivered branch.
func printDemoOutcome(out io.Writer, pad string, r fleet.TaskResult) {
	if c := r.Checks; c != nil {
		var runs []string
		for _, run := range c.Runs {
			status := "passed"
			if !run.Passed {
				status = "failed"
			}
			runs = append(runs, fmt.Sprintf("%s %s %s", run.Name, run.Phase, status))
		}
		fmt.Fprintf(out, "%schecks: %s (%s)\n", pad, c.Verdict, strings.Join(runs, ", "))
	}
	if d := r.Delivery; d != nil {
		switch {
		case d.Pushed:
			fmt.Fprintf(out, "%sbranch: %s at %s\n", pad, d.Branch, d.Commit[:min(12, len(d.Commit))])
		case d.Error != "":
			fmt.Fprintf(out, "%sbranch: %s not delivered: %s\n", pad, d.Branch, firstLineOf(d.Error, 100))
		default:
			fmt.Fprintf(out, "%sbranch: %s not delivered: %s\n", pad, d.Branch, d.Skipped)
		}
	}
}

// diffFiles lists the files a unified diff changes.
func diffFiles(diff []byte) string {
	var files []string
	for line := range strings.SplitSeq(string(diff), "\n") {
		if name, ok := strings.CutPrefix(line, "+++ b/"); ok {
			files = append(files, name)
		}
	}
	sort.Strings(files)
	if len(files) == 0 {
		return "(none)"
	}
	return strings.Join(files, ", ")
}

func firstLineOf(s string, n int) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// errDemoDir says the demo directory is incomplete.
var errDemoDir = errors.New("not a demo directory")

// CheckDemoDir reports a demo directory that lacks one of its files.
func CheckDemoDir(dir string) error {
	for _, name := range []string{demoRepoDir + "/go.mod", demoBacklog, demoPlanFile} {
		if _, err := fs.Stat(os.DirFS(dir), name); err != nil {
			return fmt.Errorf("%w: %s has no %s (run from the repository root, or pass --demo examples/demo)", errDemoDir, dir, name)
		}
	}
	return nil
}

// shortTaskID is the tail of a task id: ids are UUIDv7, whose heads are
// timestamps and look alike for tasks created together.
func shortTaskID(id uuid.UUID) string {
	s := id.String()
	return "…" + s[len(s)-8:]
}
