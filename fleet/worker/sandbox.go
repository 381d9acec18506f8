package worker

import (
	"errors"
	"fmt"
	"log/slog"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/execenv"
	"github.com/agentfleet/agentfleet/execenv/sandbox"
	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/internal/tasksandbox"
)

// Values of Config.Sandbox (see fleet/internal/tasksandbox).
const (
	SandboxOn   = tasksandbox.On
	SandboxOff  = tasksandbox.Off
	SandboxAuto = tasksandbox.Auto
)

// sandboxOperator is the sandbox part of the configuration.
func (c Config) sandboxOperator() tasksandbox.Operator {
	limits, _ := c.SandboxLimits.limits() // Validate reports a bad size
	return tasksandbox.Operator{Mode: c.Sandbox, Bound: c.SandboxBound, ReadOnly: c.SandboxReadOnly,
		Writable: c.SandboxWritable, Env: c.SandboxEnv, AllowPrivate: c.allowPrivate(), UIDRange: c.SandboxUIDRange, Limits: limits}
}

// sandboxOperator is the configuration's, counting limit hits in the
// worker's metrics.
func (w *Worker) sandboxOperator() tasksandbox.Operator {
	op := w.cfg.sandboxOperator()
	op.OnLimit = func(limit string) { w.metrics.limitHits.WithLabelValues(limit).Inc() }
	return op
}

// localEnv builds a local task's environment under the worker's sandbox
// and records which sandbox it is; a refusal fails the task as not
// allowed, with the reason.
func (r *run) localEnv(cfg execenv.LocalConfig) (execenv.Environment, error) {
	env, label, err := r.sandboxState().EnvReading(cfg, r.spec.Sandbox, r.tree().String(), r.log, append(r.worktreeGit(), r.mirrorDirs()...))
	var refused *tasksandbox.RefusedError
	switch {
	case errors.As(err, &refused):
		return nil, fmt.Errorf("%w: %s", errNotAllowed, refused.Reason)
	case err != nil:
		return nil, fmt.Errorf("%w: %v", errBadEnvironment, err)
	}
	r.sandbox = r.imageLabel(label)
	return env, nil
}

// tree is the task's tree: the root task's id, which keys its uid.
func (r *run) tree() uuid.UUID {
	if r.task.RootID == uuid.Nil {
		return r.task.ID // a root task: the tree is its own
	}
	return r.task.RootID
}

// LocalEnvironment builds the environment a local task with spec would
// get on a worker configured with cfg, in dir: the same sandbox, bound and
// file-tool scope (`worker tool --sandbox`). label names the sandbox.
// The caller cleans the environment up.
func LocalEnvironment(cfg Config, dir string, spec fleet.SandboxSpec, log *slog.Logger) (env execenv.Environment, label string, err error) {
	if err := cfg.sandboxOperator().Validate(); err != nil {
		return nil, "", err
	}
	return tasksandbox.Start(cfg.sandboxOperator(), log).Env(execenv.LocalConfig{WorkingDir: dir}, spec, "", log)
}

// sweepSandboxes removes the sandbox directories a killed worker left in
// the temporary directory (sandbox.SweepStale leaves every one in use).
func (w *Worker) sweepSandboxes() {
	removed, err := sandbox.SweepStale()
	switch {
	case err != nil:
		w.log.Warn("looking for sandbox directories left by a killed worker", "err", err)
	case len(removed) > 0:
		w.log.Info("removed sandbox directories left by a killed worker", "count", len(removed))
	}
}
