package checks

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/agent"
	"github.com/agentfleet/agentfleet/execenv"
	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/store"
	"github.com/agentfleet/agentfleet/tools"
)

// ArtifactKind is the kind of the artifacts holding check outputs.
const ArtifactKind = "check"

// RepairMarker starts every input that gives failing checks back to the
// agent (see CountRepairs).
const RepairMarker = "[agentfleet checks] "

// Artifacts stores check outputs (a store.Store satisfies it).
type Artifacts interface {
	PutArtifact(ctx context.Context, p store.PutArtifactParams) (store.Artifact, error)
}

// Session is the part of the agent's session the repair loop uses.
type Session interface {
	Submit(ctx context.Context, input string) (agent.Outcome, error)
}

// Runner runs one task's checks. Env, Store, TaskID and Spec are required.
type Runner struct {
	Env    execenv.Environment
	Store  Artifacts
	TaskID uuid.UUID
	Spec   fleet.Verification
	// OnRun, when set, is called after each run (the worker publishes it
	// as a CHECK_END event).
	OnRun func(fleet.CheckRun)
	// Stopped, when set, reports that the task was stopped from outside
	// (aborted, cancelled, draining): no further check starts.
	Stopped func() bool
	// Closed, when set, is closed when the session is (an abort): a check
	// running then is killed rather than left to its timeout.
	Closed <-chan struct{}
	Log    *slog.Logger
	// Redact, when set, rewrites a check's output before it is stored,
	// published or shown to the agent (the worker's secrets redacted).
	Redact func(string) string

	report fleet.CheckReport
}

// Report returns the record so far, nil when no check ran (or r is nil).
func (r *Runner) Report() *fleet.CheckReport {
	if r == nil || len(r.report.Runs) == 0 {
		return nil
	}
	rep := r.report
	return &rep
}

// Before runs every check once before the agent starts, when the spec asks
// for it.
func (r *Runner) Before(ctx context.Context) {
	if r.Spec.ChecksBefore {
		r.runAll(ctx, fleet.CheckBefore, 0)
	}
}

// Verify runs the checks after an answer (out) and, while some fail and
// repair rounds remain, gives their outputs to the agent and checks its
// next answer. repairsDone is how many repair inputs the session already
// had (CountRepairs of its history). It returns the session's last
// outcome; when that is not a completed answer (a limit, an abort, an
// error) the caller handles it as without checks, and the verdict stays
// "", as it does when the task is stopped from outside meanwhile. After a
// completed answer, Passed says whether every check passed.
func (r *Runner) Verify(ctx context.Context, sess Session, out agent.Outcome, repairsDone int) (agent.Outcome, error) {
	round := repairsDone
	r.report.RepairRounds = round
	for {
		failed := r.runAll(ctx, fleet.CheckAfter, round)
		if r.stopped(ctx) {
			return out, nil
		}
		if len(failed) == 0 {
			r.report.Verdict = r.passVerdict()
			return out, nil
		}
		if round >= r.Spec.RepairRounds() {
			r.report.Verdict = fleet.VerdictFailed
			return out, nil
		}
		round++
		r.report.RepairRounds = round
		var err error
		out, err = sess.Submit(ctx, repairInput(failed, round, r.Spec.RepairRounds()))
		if err != nil || !Completed(out) {
			return out, err
		}
	}
}

// Passed reports whether the checks ran after an answer and all passed.
func (r *Runner) Passed() bool {
	v := r.report.Verdict
	return v != "" && v != fleet.VerdictFailed
}

// Completed reports whether an outcome is a finished answer.
func Completed(out agent.Outcome) bool {
	return out.Stop == agent.StopCompleted || out.Stop == agent.StopAwaitingInput
}

func (r *Runner) stopped(ctx context.Context) bool {
	return ctx.Err() != nil || r.Stopped != nil && r.Stopped()
}

// passVerdict says how passing checks compare with the runs before the
// agent started.
func (r *Runner) passVerdict() string {
	ran, passed := false, true
	for _, run := range r.report.Runs {
		if run.Phase == fleet.CheckBefore {
			ran = true
			passed = passed && run.Passed
		}
	}
	switch {
	case !ran:
		return fleet.VerdictPassed
	case passed:
		return fleet.VerdictAlreadyPassing
	}
	return fleet.VerdictFixed
}

// failure is a failed run with the output the agent is shown.
type failure struct {
	run    fleet.CheckRun
	output string
}

// runAll runs every check once and returns the failures.
func (r *Runner) runAll(ctx context.Context, phase string, round int) []failure {
	var failed []failure
	for _, c := range r.Spec.Checks {
		if r.stopped(ctx) {
			break
		}
		run, output := r.runOne(ctx, c, phase, round)
		r.report.Runs = append(r.report.Runs, run)
		if r.OnRun != nil {
			r.OnRun(run)
		}
		if !run.Passed {
			failed = append(failed, failure{run: run, output: output})
		}
	}
	return failed
}

// runOne runs a check and stores its output.
func (r *Runner) runOne(ctx context.Context, c fleet.Check, phase string, round int) (fleet.CheckRun, string) {
	run := fleet.CheckRun{Name: c.Name, Command: c.Command, Phase: phase, Round: round,
		Output: artifactName(c.Name, phase, round)}
	started := time.Now()
	ctx, span := startCheck(ctx, c, phase, round)
	defer func() { endCheck(span, run) }()
	execCtx, stop := r.untilClosed(ctx)
	res, err := r.Env.Exec(execCtx, execenv.ExecRequest{Command: c.Command, Timeout: c.TimeoutOrDefault()})
	stop()
	run.DurationMS = time.Since(started).Milliseconds()
	output := combined(res, c, err)
	if r.Redact != nil {
		output = r.Redact(output)
	}
	run.ExitCode, run.TimedOut = res.ExitCode, res.TimedOut
	if err != nil {
		run.ExitCode = -1
	}
	run.Passed = err == nil && !res.TimedOut && !res.Canceled && res.ExitCode == 0
	_, perr := r.Store.PutArtifact(ctx, store.PutArtifactParams{TaskID: r.TaskID, Kind: ArtifactKind, Name: run.Output,
		ContentType: "text/plain; charset=utf-8", Content: []byte(output)})
	if perr != nil {
		run.Output = ""
		if r.Log != nil {
			r.Log.Warn("storing a check's output", "check", c.Name, "err", perr)
		}
	}
	return run, output
}

// untilClosed derives a context that also ends when the session closes.
func (r *Runner) untilClosed(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	if r.Closed != nil {
		go func() {
			select {
			case <-r.Closed:
				cancel()
			case <-ctx.Done():
			}
		}()
	}
	return ctx, cancel
}

// artifactName names the output artifact of a run.
func artifactName(check, phase string, round int) string {
	if phase == fleet.CheckBefore {
		return "before." + check
	}
	return fmt.Sprintf("round%d.%s", round, check)
}

// combined is a run's output as stored: stdout, then stderr, then what
// stopped it.
func combined(res execenv.ExecResult, c fleet.Check, err error) string {
	var b strings.Builder
	b.WriteString(res.Stdout)
	if res.Stderr != "" {
		if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
			b.WriteByte('\n')
		}
		b.WriteString(res.Stderr)
	}
	switch {
	case err != nil:
		fmt.Fprintf(&b, "\n[the check could not run: %v]", err)
	case res.Canceled:
		b.WriteString("\n[stopped: the task was stopped while the check ran]")
	case res.TimedOut:
		fmt.Fprintf(&b, "\n[timed out after %s and was killed]", c.TimeoutOrDefault())
	case res.OmittedBytes > 0:
		fmt.Fprintf(&b, "\n[%d bytes of output were omitted in the middle]", res.OmittedBytes)
	}
	return b.String()
}

// repairInput is the input that gives failed checks back to the agent:
// it names each check, its command and exit status, and its output
// truncated as the shell tool's output is.
func repairInput(failed []failure, round, rounds int) string {
	var b strings.Builder
	b.WriteString(RepairMarker)
	fmt.Fprintf(&b, "After your answer, %d of the task's checks failed (repair round %d of %d). "+
		"Fix the cause in the workspace, run the check yourself if you can, then answer again.\n", len(failed), round, rounds)
	limits := tools.DefaultLimits("shell")
	for _, f := range failed {
		status := fmt.Sprintf("exit status %d", f.run.ExitCode)
		if f.run.TimedOut {
			status = "timed out"
		}
		out, _ := tools.Truncate(strings.TrimSpace(f.output), limits)
		fmt.Fprintf(&b, "\nCheck %q failed (%s): %s\n<output>\n%s\n</output>\n", f.run.Name, status, f.run.Command, out)
	}
	return b.String()
}

// CountRepairs counts the repair inputs among a session's user inputs.
func CountRepairs(h []agent.Turn) int {
	n := 0
	for _, t := range h {
		if t.Kind == agent.TurnUser && strings.HasPrefix(t.Text, RepairMarker) {
			n++
		}
	}
	return n
}

// Failure says which checks failed on the last answer, for the task
// result's error.
func (r *Runner) Failure() string {
	last := -1
	for _, run := range r.report.Runs {
		if run.Phase == fleet.CheckAfter {
			last = max(last, run.Round)
		}
	}
	var names []string
	for _, run := range r.report.Runs {
		if run.Phase == fleet.CheckAfter && run.Round == last && !run.Passed {
			names = append(names, strconv.Quote(run.Name))
		}
	}
	return fmt.Sprintf("checks still failing after %d repair rounds: [%s]", r.report.RepairRounds, strings.Join(names, ","))
}
