package chaos

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/llm/sim/scripted"
)

// Config sets up a run. Timings are shorter than the production defaults
// (ack wait 60 s, stale after 45 s) so that a run fits in CI; recovery
// times are reported against them.
type Config struct {
	Dir      string // the run's directory: logs, configurations, data
	BinDir   string // holds dispatcher, worker, simllm and nats-server
	NATSConf string // deploy/nats/nats.conf, the node configuration used

	Tasks int           // per scenario (a tree scenario: parents with two children each, as many tasks in all)
	Sleep time.Duration // what each task's shell command sleeps
	Slots int           // sessions per worker

	AckWait, StaleAfter, Heartbeat, DrainGrace, WorkerGoneAfter time.Duration
	ShortOutage, LongOutage                                     time.Duration

	// Only, when not empty, names the scenarios to run (by name prefix).
	Only []string
}

// Defaults returns the long run's configuration; Short the CI run's.
func Defaults() Config {
	return Config{Tasks: 300, Sleep: 2 * time.Second, Slots: 8,
		AckWait: 20 * time.Second, StaleAfter: 20 * time.Second, Heartbeat: 5 * time.Second,
		DrainGrace: 10 * time.Second, WorkerGoneAfter: 30 * time.Second,
		ShortOutage: 20 * time.Second, LongOutage: 90 * time.Second}
}

// Short is Defaults with a smaller backlog, for CI.
func Short() Config {
	c := Defaults()
	c.Tasks, c.Slots = 45, 4
	return c
}

// Run starts the fleet, runs every scenario in turn, and writes the
// verification table to out. It returns an error if any scenario lost work
// or could not run.
func Run(ctx context.Context, cfg Config, out io.Writer) ([]Result, error) {
	f, err := startFleet(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer f.close()
	fmt.Fprintf(out, "chaos: fleet up in %s (3 NATS nodes R3, Postgres, model, dispatcher, 3 workers x %d sessions); logs in %s\n",
		cfg.Dir, cfg.Slots, cfg.Dir)
	var results []Result
	var errs []error
	for _, sc := range scenarios(cfg) {
		if !selected(cfg.Only, sc.name) {
			continue
		}
		if err := f.heal(ctx); err != nil {
			return results, fmt.Errorf("chaos: before %s: %w", sc.name, err)
		}
		fmt.Fprintf(out, "chaos: %s ...\n", sc.name)
		r, err := runScenario(ctx, f, sc)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", sc.name, err))
		}
		results = append(results, r)
		fmt.Fprintf(out, "chaos: %s: %s\n", sc.name, r.Summary())
		if r.Lost() {
			errs = append(errs, fmt.Errorf("%s lost work: %s", sc.name, r.Summary()))
		}
	}
	PrintTable(out, cfg, results)
	return results, errors.Join(errs...)
}

func selected(only []string, name string) bool {
	if len(only) == 0 {
		return true
	}
	for _, o := range only {
		if strings.HasPrefix(name, o) {
			return true
		}
	}
	return false
}

// runScenario submits a backlog, injects the fault once it is under way,
// waits for every task to end (or the deadline) and verifies.
func runScenario(ctx context.Context, f *fleetProcs, sc scenario) (Result, error) {
	r := Result{Scenario: sc.name}
	before, err := modelStats(ctx, f)
	if err != nil {
		return r, err
	}
	start := time.Now()
	roots, err := submitBacklog(ctx, f, sc)
	if err != nil {
		return r, err
	}
	if err := waitUnderWay(ctx, f, roots, sc.tree); err != nil {
		return r, err
	}
	r.FaultAt = time.Since(start)
	faultStart := time.Now()
	r.Fault, err = sc.inject(ctx, f)
	if err != nil {
		return r, fmt.Errorf("injecting the fault: %w", err)
	}
	r.FaultFor = time.Since(faultStart)
	waitEnded(ctx, f, roots, deadline(f.cfg))
	r.Duration = time.Since(start)
	err = verify(ctx, f, roots, start, faultStart, before, &r)
	if err == nil && sc.capped {
		err = checkCapped(ctx, f, roots)
	}
	return r, err
}

// deadline bounds how long a scenario's backlog may take after its fault:
// the backlog's own time twice over, plus the longest outage and the
// redelivery and takeover timings several times.
func deadline(cfg Config) time.Duration {
	work := time.Duration(cfg.Tasks) * (cfg.Sleep + time.Second) / time.Duration(cfg.Slots*workers)
	return 2*work + cfg.LongOutage + 4*cfg.AckWait + 4*cfg.StaleAfter + time.Minute
}

// submitBacklog submits the scenario's tasks in one batch, labelled with
// the scenario's name, and returns their ids.
func submitBacklog(ctx context.Context, f *fleetProcs, sc scenario) ([]uuid.UUID, error) {
	var specs []fleet.TaskSpec
	switch {
	case sc.local:
		repo, err := f.upstream(ctx)
		if err != nil {
			return nil, err
		}
		for i := range f.cfg.Tasks / 3 {
			specs = append(specs, localTreeSpec(f, repo, sc.name, i))
		}
	case sc.tree:
		for i := range f.cfg.Tasks / 3 {
			specs = append(specs, treeSpec(f, sc.name, i))
		}
	default:
		for i := range f.cfg.Tasks {
			specs = append(specs, leafSpec(f.cfg, sc.name, i))
			if sc.capped {
				specs[i].ConcurrencyKey = cappedKey
			}
		}
	}
	resp, err := f.client.SubmitBatch(ctx, specs)
	if err != nil {
		return nil, fmt.Errorf("chaos: submit the backlog: %w", err)
	}
	var ids []uuid.UUID
	for _, t := range resp.Tasks {
		ids = append(ids, t.ID)
	}
	return ids, nil
}

// leafSteps is what every task (and every child) does: one shell round
// that sleeps, then an answer quoting its output.
func leafSteps(cfg Config, tag string) []scripted.Step {
	cmd := fmt.Sprintf("sleep %g && echo %s", cfg.Sleep.Seconds(), tag)
	return []scripted.Step{{Calls: []scripted.Call{scripted.Shell(cmd)}}, {Text: "done: {{results}}"}}
}

func leafSpec(cfg Config, scenario string, i int) fleet.TaskSpec {
	tag := fmt.Sprintf("%s-%d", scenario, i)
	return fleet.TaskSpec{Prompt: scripted.Prompt("chaos task "+tag, leafSteps(cfg, tag)...),
		Profile: "anthropic", Labels: map[string]string{"chaos": scenario}}
}

// treeSpec is a parent that spawns two children, parks while they run,
// and answers with their results. Its workspace is shared, so its children
// and its resumption may run on any worker.
func treeSpec(f *fleetProcs, scenario string, i int) fleet.TaskSpec {
	tag := fmt.Sprintf("%s-%d", scenario, i)
	var spawns, waits []scripted.Call
	for c := range 2 {
		child := fmt.Sprintf("%s-child-%d", tag, c)
		spawns = append(spawns, scripted.Spawn("chaos child "+child, leafSteps(f.cfg, child)...))
		waits = append(waits, scripted.Call{Name: "wait", Args: map[string]any{"agent_id": fmt.Sprintf("{{agent:%d}}", c)}})
	}
	steps := []scripted.Step{{Calls: spawns}, {Calls: waits}, {Text: "children said: {{results}}"}}
	dir := filepath.Join(f.dir, "shared", tag)
	_ = os.MkdirAll(dir, 0o755)
	return fleet.TaskSpec{Prompt: scripted.Prompt("chaos parent "+tag, steps...), Profile: "anthropic",
		Labels:      map[string]string{"chaos": scenario},
		Environment: fleet.Environment{Kind: fleet.EnvLocal, WorkingDir: dir, Shared: true}}
}
