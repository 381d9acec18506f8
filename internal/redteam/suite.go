package redteam

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/execenv/sandbox"
	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/llm/sim/scripted"
)

// Outcome is how a probe ended.
type Outcome string

// The outcomes of a probe. Escaped and Error fail the run.
const (
	Held    Outcome = "held"    // the effect did not happen
	Escaped Outcome = "ESCAPED" // the effect happened
	NA      Outcome = "n/a"     // the probe cannot say anything here (the evidence says why)
	Error   Outcome = "ERROR"   // the probe itself failed (setup, fleet)
	OK      Outcome = "ok"      // the control task ran as it should
)

// Result is a probe's outcome with one line of evidence.
type Result struct {
	Probe    string
	Outcome  Outcome
	Evidence string
	Took     time.Duration
}

// Probe is one attack, defined by its effect (see the package doc).
type Probe struct {
	Name  string
	Issue string // the item of issue 27's list it proves, "#29" for issue 29's ("plain": a hole the sandbox always closed)
	What  string // what it tries, one line
	run   func(ctx context.Context, e *env) Result
	// Timeout bounds the probe (default 90 s).
	Timeout time.Duration
}

// Probes returns every probe, in the order they run (the control first).
func Probes() []Probe { return append([]Probe{control}, probes...) }

// Config configures a run.
type Config struct {
	// Match selects the probes whose name it matches (nil: all).
	Match *regexp.Regexp
	// Dir is the run's directory (default a new temporary one, removed
	// after a run without escapes).
	Dir string
	// Verbose prints every stored text of a probe's task (debugging).
	Verbose bool
	// Logger receives the fleet's logs (default discarded).
	Logger *slog.Logger
}

// Run starts a fleet, runs the selected probes one after another and
// prints the table to out. It returns the results; an error only when
// the fleet could not start.
func Run(ctx context.Context, cfg Config, out io.Writer) ([]Result, error) {
	sel := []Probe{control}
	for _, p := range probes {
		if cfg.Match == nil || cfg.Match.MatchString(p.Name) {
			sel = append(sel, p)
		}
	}
	if len(sel) == 1 {
		return nil, fmt.Errorf("redteam: no probe matches %v (see -list)", cfg.Match)
	}
	e, err := newEnv(ctx, cfg)
	if err != nil {
		return nil, err
	}
	var results []Result
	defer func() {
		e.close()
		e.removeDir(out, results)
	}()
	fmt.Fprintf(out, "redteam: uid %d, sandbox: %s, run directory %s\n", os.Getuid(), sandboxState(), e.dir)
	for _, p := range sel {
		r := e.runProbe(ctx, p)
		fmt.Fprintf(out, "  %-26s %-8s %s (%s)\n", r.Probe, r.Outcome, r.Evidence, r.Took.Round(100*time.Millisecond))
		results = append(results, r)
	}
	PrintTable(out, results)
	return results, nil
}

func sandboxState() string {
	if err := sandbox.Available(); err != nil {
		return "NONE (" + oneLine(err.Error()) + ")"
	}
	return "bubblewrap"
}

// Failed reports whether any result escaped or erred.
func Failed(results []Result) bool {
	for _, r := range results {
		if r.Outcome == Escaped || r.Outcome == Error {
			return true
		}
	}
	return false
}

// PrintTable writes the results as a table.
func PrintTable(out io.Writer, results []Result) {
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "\nPROBE\tITEM\tRESULT\tEVIDENCE")
	for _, r := range results {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Probe, issueOf(r.Probe), r.Outcome, r.Evidence)
	}
	_ = tw.Flush()
}

func issueOf(name string) string {
	for _, p := range Probes() {
		if p.Name == name {
			return p.Issue
		}
	}
	return ""
}

// control runs first, whatever is selected: a plain task must run and
// its output be stored, or every probe would hold for the wrong reason
// (a fleet that runs nothing lets nothing out). It is OK when it ran,
// else Error.
var control = Probe{Name: "control", Issue: "-", What: "a plain task runs a command and its output is stored (else every probe would hold for nothing)",
	run: func(ctx context.Context, e *env) Result {
		p, want := proof("control")
		o, err := e.run(ctx, spec("control", steps(shell(p))))
		if err != nil {
			return errResult(err)
		}
		if o.refused != "" {
			return Result{Outcome: Error, Evidence: "a plain task was " + o.refused}
		}
		if _, ok := o.rec.has(want); !ok || o.rec.state() != "succeeded" {
			r := o.held("a plain command's output is not stored")
			return Result{Outcome: Error, Evidence: r.Evidence}
		}
		return Result{Outcome: OK, Evidence: "a plain task ran a command and its output was stored"}
	}}

// env is what probes share: the fleet, the run's directory, the
// canaries the worker was configured with, and the listeners whose
// origins its allowlists name.
type env struct {
	cfg     Config
	dir     string
	tmpDir  bool
	fleet   *testFleet
	outside string // a host directory outside every workspace, with canary files

	providerKey string // the worker's provider key (a canary)
	mcpSecret   string // the value of ${secret:redteam_mcp}
	mcpFirst    *httpSink
	mcpSecond   *httpSink
}

// The allowlist entries of the worker the bypass probes try to get around.
const (
	hookAllowed = "http://hooks.example.com"
	mcpAllowed  = "http://mcp.example.com"
)

func newEnv(ctx context.Context, cfg Config) (_ *env, err error) {
	e := &env{cfg: cfg, dir: cfg.Dir}
	if e.dir == "" {
		if e.dir, err = os.MkdirTemp("", "agentfleet-redteam-"); err != nil {
			return nil, err
		}
		e.tmpDir = true
	}
	if e.dir, err = filepath.Abs(e.dir); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			e.close()
		}
	}()
	e.outside = filepath.Join(e.dir, "outside")
	if err := os.MkdirAll(e.outside, 0o755); err != nil {
		return nil, err
	}
	e.providerKey = "sk-ant-redteam-" + canary()
	e.mcpSecret = "mcp-secret-" + canary()
	if e.mcpSecond, err = newHTTPSink("127.0.0.2", nil); err != nil {
		return nil, err
	}
	if e.mcpFirst, err = newHTTPSink("127.0.0.1", redirectTo(e.mcpSecond.URL)); err != nil {
		return nil, err
	}
	e.fleet, err = startFleet(ctx, fleetConfig{
		Dir: e.dir, ProviderKey: e.providerKey,
		MCPSecrets:   map[string]string{"redteam_mcp": e.mcpSecret},
		MCPAllowlist: []string{e.mcpFirst.URL + "/", mcpAllowed},
		HookAllow:    []string{hookAllowed},
		Logger:       cfg.Logger,
	})
	return e, err
}

func (e *env) close() {
	if e.fleet != nil {
		e.fleet.close()
	}
	for _, s := range []*httpSink{e.mcpFirst, e.mcpSecond} {
		if s != nil {
			s.Close()
		}
	}
}

// removeDir removes the run's directory when Run made it and nothing
// escaped or erred; otherwise it says where the directory is kept.
func (e *env) removeDir(out io.Writer, results []Result) {
	if !e.tmpDir || Failed(results) {
		fmt.Fprintf(out, "redteam: run directory kept: %s\n", e.dir)
		return
	}
	_ = os.RemoveAll(e.dir)
}

func (e *env) runProbe(ctx context.Context, p Probe) (r Result) {
	timeout := p.Timeout
	if timeout == 0 {
		timeout = 90 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	defer func() {
		if v := recover(); v != nil {
			r = Result{Outcome: Error, Evidence: fmt.Sprintf("panic: %v", v)}
		}
		r.Probe, r.Took = p.Name, time.Since(start)
	}()
	if err := e.fleet.alive(); err != nil {
		return Result{Outcome: Error, Evidence: "the fleet is down before the probe: " + oneLine(err.Error())}
	}
	return p.run(ctx, e)
}

// canary returns 16 random hex digits.
func canary() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// proof returns a command that prints want, without want appearing in the
// command itself: a probe whose command ran to that point leaves want in
// the task's output, and only there.
func proof(tag string) (cmd, want string) {
	a, b := "RT"+tag, canary()
	return fmt.Sprintf("printf '%%s-%%s\\n' %s %s", a, b), a + "-" + b
}

// shell is a call to the anthropic profile's shell tool with a timeout.
func shell(command string) scripted.Call {
	return scripted.Call{Name: "shell", Args: map[string]any{"command": command, "timeout": 60000}}
}

// steps are one step per call, then a final answer.
func steps(calls ...scripted.Call) []scripted.Step {
	var st []scripted.Step
	for _, c := range calls {
		st = append(st, scripted.Step{Calls: []scripted.Call{c}})
	}
	return append(st, scripted.Step{Text: "Done."})
}

// spec is an anthropic task following steps.
func spec(title string, st []scripted.Step) fleet.TaskSpec {
	return fleet.TaskSpec{Prompt: scripted.Prompt("redteam "+title, st...), Profile: "anthropic",
		Limits: fleet.Limits{WallTime: fleet.Duration(2 * time.Minute)}}
}

// outcome is the result of a submitted task: its record, or a refusal.
type outcome struct {
	rec     *record
	refused string
}

// run submits s and waits for its tree to finish.
func (e *env) run(ctx context.Context, s fleet.TaskSpec) (outcome, error) {
	id, refused, err := submit(ctx, e.fleet.client, s)
	if err != nil || refused != "" {
		return outcome{refused: refused}, err
	}
	rec, err := waitRecord(ctx, e.fleet.client, id)
	if err != nil {
		return outcome{}, err
	}
	if e.cfg.Verbose {
		for _, t := range rec.texts {
			fmt.Fprintf(os.Stderr, "    | %s\n", oneLine(t))
		}
	}
	return outcome{rec: rec}, nil
}

// held describes an outcome whose effect did not happen.
func (o outcome) held(what string) Result {
	if o.refused != "" {
		return Result{Outcome: Held, Evidence: o.refused}
	}
	ev := fmt.Sprintf("%s; task %s", what, o.rec.state())
	if len(o.rec.errs) > 0 {
		ev += ": " + oneLine(o.rec.errs[0])
	}
	return Result{Outcome: Held, Evidence: ev}
}

// escapedIf reports Escaped with the excerpt where want shows in the
// task's record, else held.
func (o outcome) escapedIf(want, what, heldWhat string) Result {
	if o.rec != nil {
		if ex, ok := o.rec.has(want); ok {
			return Result{Outcome: Escaped, Evidence: what + ": " + strings.ReplaceAll(ex, want, "<canary>")}
		}
	}
	return o.held(heldWhat)
}

func errResult(err error) Result {
	return Result{Outcome: Error, Evidence: oneLine(err.Error())}
}

// cancel cancels a task the probe no longer needs (best effort).
func (e *env) cancel(id uuid.UUID) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, _ = e.fleet.client.Cancel(ctx, id, "redteam: the probe has its answer")
}
