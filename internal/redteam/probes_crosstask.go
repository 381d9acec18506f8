package redteam

// The cross-task probe: one task against another running on the same
// worker at the same time.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// probeCrossTask runs two tasks at once on a second fleet whose worker
// shows its sandboxes the worker's temporary directory (TMPDIR, mode
// 0755 as /tmp is searchable), where every task's private home and /tmp
// live (sandbox_read_only: an operator's slip, or what a task that got
// out of its mount namespace would see).
// The victim writes a canary into its home and its /tmp, then sleeps as
// a process with a marker name and prints a proof when it wakes; the
// attacker tries to read both canaries through the shown directory and
// to kill every process with the marker. Namespaces hide the victim
// from the attacker otherwise; what is probed is whether the tasks'
// uids keep them apart when they do not.
func probeCrossTask(ctx context.Context, e *env) Result {
	// A temporary directory of the probe's own (searchable, as /tmp is),
	// outside the workspaces, so that showing it shows only sandboxes'
	// directories.
	tmp := filepath.Join(e.dir, "cross-task-tmp")
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return errResult(err)
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return errResult(err)
	}
	// A root worker's tasks reach their sandbox's directory by name: the
	// run directory (0700) is made searchable while the probe runs.
	if fi, err := os.Stat(e.dir); err == nil {
		if err := os.Chmod(e.dir, fi.Mode().Perm()|0o111); err != nil {
			return errResult(err)
		}
		defer func() { _ = os.Chmod(e.dir, fi.Mode().Perm()) }()
	}
	old, had := os.LookupEnv("TMPDIR")
	if err := os.Setenv("TMPDIR", tmp); err != nil {
		return errResult(err)
	}
	defer func() {
		if had {
			_ = os.Setenv("TMPDIR", old)
		} else {
			_ = os.Unsetenv("TMPDIR")
		}
	}()
	f, err := startFleet(ctx, fleetConfig{Dir: filepath.Join(e.dir, "cross-task"), ProviderKey: e.providerKey,
		ReadOnly: []string{tmp}, Logger: e.cfg.Logger})
	if err != nil {
		return errResult(err)
	}
	defer f.close()
	home, inTmp, marker := "canary-"+canary(), "canary-"+canary(), "rt-victim-"+canary()
	wake, woke := proof("victim")
	victim := spec("cross-task victim", steps(shell(fmt.Sprintf(
		`echo %s > ~/rt-cross-home && echo %s > /tmp/rt-cross-tmp && (exec -a %s sleep 25) && %s`, home, inTmp, marker, wake))))
	glob := filepath.Join(tmp, sandboxDirGlob)
	attacker := spec("cross-task attacker", steps(shell(fmt.Sprintf(
		`for i in $(seq 100); do cat %[1]s/home/rt-cross-home %[1]s/tmp/rt-cross-tmp 2>/dev/null && break; sleep 0.2; done; `+
			`pkill -KILL -f %[2]s; kill -KILL $(pgrep -f %[2]s) 2>/dev/null; true`, glob, marker))))
	vID, refused, err := submit(ctx, f.client, victim)
	if err != nil || refused != "" {
		return Result{Outcome: Error, Evidence: fmt.Sprintf("the victim task was not accepted: %v %s", err, refused)}
	}
	aID, refused, err := submit(ctx, f.client, attacker)
	if err != nil || refused != "" {
		return Result{Outcome: Error, Evidence: fmt.Sprintf("the attacker task was not accepted: %v %s", err, refused)}
	}
	arec, err := waitRecord(ctx, f.client, aID)
	if err != nil {
		return errResult(err)
	}
	vrec, err := waitRecord(ctx, f.client, vID)
	if err != nil {
		return errResult(err)
	}
	if e.cfg.Verbose {
		for _, t := range append(append([]string{}, arec.texts...), vrec.texts...) {
			fmt.Fprintf(os.Stderr, "    | %s\n", oneLine(t))
		}
	}
	var got []string
	for _, c := range [][2]string{{"home", home}, {"/tmp", inTmp}} {
		if _, ok := arec.has(c[1]); ok {
			got = append(got, "the attacker read the other task's "+c[0]+" canary")
		}
	}
	if _, ok := vrec.has(woke); !ok || vrec.state() != "succeeded" {
		got = append(got, fmt.Sprintf("the other task's process was killed (it ended %s without waking)", vrec.state()))
	}
	if len(got) > 0 {
		return Result{Outcome: Escaped, Evidence: strings.Join(got, "; ")}
	}
	return outcome{rec: arec}.held("neither canary read, the other task's process lived")
}

// sandboxDirGlob matches the host directory of each sandbox's home and
// /tmp (execenv/sandbox's tmpPrefix).
const sandboxDirGlob = "agentfleet-sandbox-*"
