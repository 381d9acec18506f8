package fleet

import (
	"regexp"
	"strconv"
	"time"
	"unicode/utf8"
)

// Bounds and defaults of a task's checks.
const (
	DefaultRepairRounds  = 2                // MaxRepairRounds when nil
	MaxRepairRoundsLimit = 10               // the largest MaxRepairRounds accepted
	MaxChecks            = 16               // checks per task
	MaxCheckCommandBytes = 8 << 10          // one check's command
	DefaultCheckTimeout  = 10 * time.Minute // a check's timeout when it names none
	MaxCheckTimeout      = 2 * time.Hour
	// ReasonChecksFailed ends a task whose checks still failed after its
	// repair rounds.
	ReasonChecksFailed = "checks_failed"
	// KindCheckEnd is the event a worker publishes after each check run;
	// its data is a CheckRun.
	KindCheckEnd = "CHECK_END"
)

// checkName is what a check's name may hold: it names the check's output
// artifact and appears in the input that asks the agent to repair.
var checkName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$`)

// Verification is what a task must pass before it may succeed: commands
// run in the task's workspace (through its execution environment, so in
// its sandbox) after the agent's final answer. It is embedded in TaskSpec,
// so its fields sit at the top level of a spec: "checks",
// "max_repair_rounds", "checks_before".
type Verification struct {
	// Checks run in order after the agent answers; all run, even after one
	// fails, so the agent hears of every failure at once.
	Checks []Check `json:"checks,omitempty"`
	// MaxRepairRounds bounds how often failing checks go back to the agent
	// as a new input: nil means DefaultRepairRounds, 0 none.
	MaxRepairRounds *int `json:"max_repair_rounds,omitempty"`
	// ChecksBefore runs the checks once before the agent starts, so the
	// result says whether they were failing before.
	ChecksBefore bool `json:"checks_before,omitempty"`
}

// Check is one command a task must pass: exit status 0 within Timeout.
type Check struct {
	Name    string   `json:"name"`
	Command string   `json:"command"`           // run by the environment's shell in the workspace
	Timeout Duration `json:"timeout,omitempty"` // 0 = DefaultCheckTimeout
}

// RepairRounds returns MaxRepairRounds or its default.
func (v Verification) RepairRounds() int {
	if v.MaxRepairRounds == nil {
		return DefaultRepairRounds
	}
	return *v.MaxRepairRounds
}

// TimeoutOrDefault returns the check's timeout or DefaultCheckTimeout.
func (c Check) TimeoutOrDefault() time.Duration {
	if c.Timeout <= 0 {
		return DefaultCheckTimeout
	}
	return time.Duration(c.Timeout)
}

func (v Verification) check() *FieldError {
	switch {
	case len(v.Checks) > MaxChecks:
		return fieldErr("checks", "has %d checks, at most %d are allowed", len(v.Checks), MaxChecks)
	case v.MaxRepairRounds != nil && (*v.MaxRepairRounds < 0 || *v.MaxRepairRounds > MaxRepairRoundsLimit):
		return fieldErr("max_repair_rounds", "must be between 0 and %d, got %d", MaxRepairRoundsLimit, *v.MaxRepairRounds)
	case len(v.Checks) == 0 && (v.MaxRepairRounds != nil || v.ChecksBefore):
		return fieldErr("checks", "is empty, but max_repair_rounds or checks_before is set: list the checks to run")
	}
	seen := map[string]bool{}
	for i, c := range v.Checks {
		if err := c.check(i); err != nil {
			return err
		}
		if seen[c.Name] {
			return fieldErr(checkField(i, "name"), "%q is used by another check; names must be unique", c.Name)
		}
		seen[c.Name] = true
	}
	return nil
}

func (c Check) check(i int) *FieldError {
	switch {
	case !checkName.MatchString(c.Name):
		return fieldErr(checkField(i, "name"), "%q must be 1 to 63 letters, digits, '.', '_' or '-', starting with a letter or digit", c.Name)
	case c.Command == "":
		return fieldErr(checkField(i, "command"), "is required: the shell command whose exit status 0 means the check passed")
	case len(c.Command) > MaxCheckCommandBytes:
		return fieldErr(checkField(i, "command"), "is %d bytes, more than %d; put long scripts in the repository", len(c.Command), MaxCheckCommandBytes)
	case !utf8.ValidString(c.Command):
		return fieldErr(checkField(i, "command"), "is not valid UTF-8")
	case c.Timeout < 0 || time.Duration(c.Timeout) > MaxCheckTimeout:
		return fieldErr(checkField(i, "timeout"), "must be between 0 (the default, %s) and %s, got %s", DefaultCheckTimeout, MaxCheckTimeout, time.Duration(c.Timeout))
	}
	return nil
}

func checkField(i int, name string) string { return "checks[" + strconv.Itoa(i) + "]." + name }

// Phases of a check run.
const (
	CheckBefore = "before" // before the agent started
	CheckAfter  = "after"  // after an answer of the agent
)

// CheckRun is one run of one check, recorded on the task's result.
type CheckRun struct {
	Name    string `json:"name"`
	Command string `json:"command"`
	Phase   string `json:"phase"` // CheckBefore or CheckAfter
	// Round is 0 for the runs after the agent's first answer and n for
	// those after its n-th repair (0 for CheckBefore).
	Round      int   `json:"round"`
	ExitCode   int   `json:"exit_code"` // -1 when killed (a timeout)
	TimedOut   bool  `json:"timed_out,omitempty"`
	Passed     bool  `json:"passed"`
	DurationMS int64 `json:"duration_ms"`
	// Output names the artifact of kind "check" holding the run's output
	// (stdout, then stderr): GET /v1/tasks/{id}/artifacts/check?name=<output>.
	Output string `json:"output,omitempty"`
}

// Verdicts of a task's checks (CheckReport.Verdict).
const (
	VerdictPassed         = "passed"          // passing after the agent's work (not run before)
	VerdictFixed          = "fixed"           // failing before the agent started, passing now
	VerdictAlreadyPassing = "already_passing" // passing before and after
	VerdictFailed         = "failed"          // still failing after the repair rounds
)

// CheckReport is the record of a task's checks on its result.
type CheckReport struct {
	Verdict      string     `json:"verdict,omitempty"` // "" while the checks did not get to run after an answer
	RepairRounds int        `json:"repair_rounds"`     // repair inputs given to the agent
	Runs         []CheckRun `json:"runs"`
}
