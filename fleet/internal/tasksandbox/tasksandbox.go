// Package tasksandbox decides, for a worker, what confines the commands
// of a local task: bubblewrap (execenv/sandbox) with the task's sandbox
// spec within the operator's bound, or nothing when the operator turned
// the sandbox off. Off, a task's commands see only core variables of the
// worker's environment (UnconfinedEnvPolicy), whatever its spec's
// env_policy says, but they run as the worker's user with everything that
// user can reach. `worker run` and `worker tool --sandbox` share it, so
// a tool tried from a terminal runs as a fleet task's would.
//
// # Users and limits
//
// A root worker runs each task tree's commands as a uid of its own,
// from Operator.UIDRange (sandbox_uid_range, default
// execenv/sandbox.DefaultUIDFirst-DefaultUIDLast): the uid is keyed by
// the tree's root task id, shared by the subagents that work in the same
// workspace, and given back when the tree's last environment on this
// worker is cleaned up. A worker that is not root runs them, one uid
// per tree in the same way, as uids of its user's subordinate range
// (/etc/subuid, through newuidmap; the group is the worker's own, so
// that it still reaches what tasks make) where it has such a range and
// the uidmap tools; elsewhere as its own uid, still with no capability,
// no nested user namespace and the seccomp filter. Start logs which.
//
// Confine gives the worker a sandbox of a task tree's uid for what it
// does on the task's behalf before the task's environment exists (the
// clone of its repository), and Hold keeps that uid from the one to the
// other.
//
// Operator.Limits (sandbox_limits) bound each environment; a spec's
// sandbox.limits may only narrow them: a spec asking for more is
// refused, naming the field.
package tasksandbox

import (
	"fmt"
	"log/slog"
	"maps"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/agentfleet/agentfleet/execenv"
	"github.com/agentfleet/agentfleet/execenv/sandbox"
	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/internal/bytesize"
)

// Modes of Operator.Mode.
const (
	On   = "on"   // the default: bubblewrap, local tasks refused where it cannot run
	Off  = "off"  // unconfined, as the worker's user
	Auto = "auto" // on where bubblewrap runs, else off (dev mode, tests)
)

// Label is TaskResult.Sandbox of a task that ran unconfined.
const Label = "off"

// RefusedError is a local task this worker will not run: its sandbox
// cannot start here, or the spec asks for more than the operator allows.
type RefusedError struct{ Reason string }

func (e *RefusedError) Error() string { return e.Reason }

// Operator is the sandbox part of a worker's configuration.
type Operator struct {
	Mode     string             // "" means On
	Bound    fleet.SandboxBound // the widest sandbox a spec may ask for
	ReadOnly []string           // further paths commands and file tools may read
	Writable []string           // directories every sandbox may write (shared caches)
	Env      map[string]string  // variables every sandboxed command gets
	// AllowPrivate are the internal addresses the egress proxy may reach
	// (the worker's outbound_allow_private).
	AllowPrivate []netip.Prefix
	UIDRange     string             // "first-last": a root worker's task uids; "" the default range
	Limits       sandbox.Limits     // bounds of each task's environment (zero fields: none)
	OnLimit      func(limit string) // learns of each command that hit a limit (a metric)
}

// Validate names a bad key of the worker's configuration.
func (o Operator) Validate() error {
	switch o.Mode {
	case "", On, Off, Auto:
	default:
		return fmt.Errorf("sandbox must be %q, %q or %q, got %q", On, Off, Auto, o.Mode)
	}
	for key, paths := range map[string][]string{"sandbox_read_only": o.ReadOnly, "sandbox_writable": o.Writable} {
		for _, p := range paths {
			if !filepath.IsAbs(p) {
				return fmt.Errorf("%s entry %q must be an absolute path", key, p)
			}
		}
	}
	if o.UIDRange != "" {
		if _, _, err := sandbox.ParseUIDRange(o.UIDRange); err != nil {
			return fmt.Errorf("sandbox_uid_range: %w", err)
		}
	}
	if err := o.Limits.Validate(); err != nil {
		return fmt.Errorf("sandbox_limits: %w", err)
	}
	return o.Bound.Validate()
}

// State is what a worker found at start: whether local tasks' commands
// run under bubblewrap, or why local tasks are refused.
type State struct {
	op      Operator
	on      bool
	missing error        // sandbox on but bubblewrap cannot run
	ids     *sandbox.IDs // the task trees' uids
	image   *Image       // WithImage's (image.go)
}

// Start checks bubblewrap once and logs what local tasks will run in.
func Start(op Operator, log *slog.Logger) State {
	st := State{op: op}
	if op.Mode == Off {
		log.Warn("sandbox: off: local tasks run unconfined, as this worker's user, with its files and network")
		return st
	}
	first, last := sandbox.DefaultUIDFirst, sandbox.DefaultUIDLast
	if op.UIDRange != "" {
		first, last, _ = sandbox.ParseUIDRange(op.UIDRange) // Validate checked it
	}
	var subErr error
	if os.Geteuid() != 0 {
		var sf, sl int
		if sf, sl, subErr = sandbox.SubordinateRange(); subErr == nil {
			first, last = sf, sl
		}
	}
	st.ids = sandbox.NewIDs(first, last)
	err := sandbox.Available()
	switch {
	case err == nil:
		cg, cgErr := sandbox.LimitsEnforcement()
		log.Info("sandbox: local tasks run under bubblewrap", "uids", uidsNote(first, last, subErr), "limits", limitsNote(op.Limits),
			"limits_by", enforcementNote(cg, cgErr))
		st.on = true
	case op.Mode == Auto:
		log.Warn("sandbox: bubblewrap cannot run here, so local tasks run UNSANDBOXED, as this worker's user", "reason", err)
	default:
		log.Error("sandbox: bubblewrap cannot run here: local tasks will be refused (set sandbox: off to run them unconfined)", "err", err)
		st.missing = err
	}
	return st
}

// Env builds a local task's environment for cfg: under bubblewrap with
// spec (within the operator's bound and limits), as the uid of tree (the
// root task's id; see "Users and limits"), its file tools kept in the
// workspace and the read-only paths; or unconfined when the sandbox is
// off. label names what confines it (TaskResult.Sandbox). A refusal is a
// *RefusedError.
func (s State) Env(cfg execenv.LocalConfig, spec fleet.SandboxSpec, tree string, log *slog.Logger) (env execenv.Environment, label string, err error) {
	return s.EnvReading(cfg, spec, tree, log, nil)
}

// EnvReading is Env whose commands may also read dirs, directories the
// caller opened, each bound read-only as opened (sandbox.OpenedDir): the
// parent's .git of a subagent in a git worktree. Unconfined commands see
// the host, so dirs only matter under the sandbox.
func (s State) EnvReading(cfg execenv.LocalConfig, spec fleet.SandboxSpec, tree string, log *slog.Logger, dirs []sandbox.OpenedDir) (env execenv.Environment, label string, err error) {
	if s.missing != nil {
		return nil, "", &RefusedError{fmt.Sprintf("local tasks run in a sandbox and %v; or set sandbox: off in this worker's configuration to run them unconfined",
			s.missing)}
	}
	if err := s.imageRefusal(); err != nil {
		return nil, "", err
	}
	if !s.on {
		cfg.EnvPolicy, cfg.KeepSecrets = UnconfinedEnvPolicy(cfg.EnvPolicy), false
		env, err := execenv.NewLocal(cfg)
		return env, Label, err
	}
	if fe := s.op.Bound.Permits(spec); fe != nil {
		return nil, "", &RefusedError{fe.Error()}
	}
	limits, err := specLimits(s.op.Limits, spec.Limits)
	if err != nil {
		return nil, "", &RefusedError{err.Error()}
	}
	set := sandbox.Settings{Network: sandbox.Network(spec.Network), AllowHosts: spec.AllowHosts,
		ReadOnly: s.op.ReadOnly, Writable: s.op.Writable, ReadOnlyDirs: dirs, Logger: log, AllowPrivate: s.op.AllowPrivate, IDs: s.ids, Tree: tree, Limits: limits}
	if s.op.OnLimit != nil {
		set.OnLimit = func(h sandbox.LimitHit) { s.op.OnLimit(h.Limit) }
	}
	for _, k := range slices.Sorted(maps.Keys(s.op.Env)) {
		set.Env = append(set.Env, k+"="+s.op.Env[k])
	}
	s.applyImage(&set)
	l, err := sandbox.NewLocal(cfg, set)
	if err != nil {
		return nil, "", err
	}
	return sandbox.Scope(l), set.Label(), nil
}

// UnconfinedEnvPolicy is the environment policy of a task whose commands
// run unconfined (sandbox off): an allowlist, execenv.EnvCoreOnly, or
// EnvNone when the spec asked for none. A denylist of secret-looking
// names would pass whatever the worker holds under other names (a
// database URL with its password, PGPASSWORD, GITHUB_PAT), so without a
// sandbox a task gets only what a build needs. That is not a boundary:
// an unconfined command runs as the worker's user and can still read
// /proc/$PPID/environ and every file that user can.
func UnconfinedEnvPolicy(p execenv.EnvPolicy) execenv.EnvPolicy {
	if p == execenv.EnvNone {
		return p
	}
	return execenv.EnvCoreOnly
}

// specLimits is the operator's limits narrowed by a spec's (which
// TaskSpec.Validate checked).
func specLimits(op sandbox.Limits, spec fleet.SandboxLimits) (sandbox.Limits, error) {
	mem, _ := bytesize.Parse(spec.Memory)
	var cpuTime time.Duration
	if spec.CPUTime != "" {
		cpuTime, _ = time.ParseDuration(spec.CPUTime)
	}
	return op.Within(sandbox.Limits{Pids: spec.Pids, Memory: mem, CPUs: spec.CPUs, CPUTime: cpuTime})
}

func uidsNote(first, last int, subErr error) string {
	switch {
	case os.Geteuid() == 0:
		return fmt.Sprintf("one per task tree, from %d-%d", first, last)
	case subErr == nil:
		return fmt.Sprintf("one per task tree, from this user's subordinate uids %d-%d", first, last)
	}
	return fmt.Sprintf("this worker's own, shared by every task (%v)", subErr)
}

func limitsNote(l sandbox.Limits) string {
	return fmt.Sprintf("pids %d, memory %s, cpus %g, cpu_time %s (0: none)", l.Pids, bytesize.Format(l.Memory), l.CPUs, l.CPUTime)
}

func enforcementNote(cgroup string, err error) string {
	if err != nil {
		return fmt.Sprintf("prlimit (RLIMIT_NPROC, RLIMIT_DATA, RLIMIT_CPU; no delegated cgroup v2: %v)", err)
	}
	return "a cgroup v2 per task under " + cgroup + ", and RLIMIT_CPU"
}
