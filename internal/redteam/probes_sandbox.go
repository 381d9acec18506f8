package redteam

// Probes of the sandbox: what a task's commands reach on the host.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/llm/sim/scripted"
)

// plant writes a canary file at dir/name and returns its path and value.
func plant(dir, name string) (string, string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", err
	}
	c := "canary-" + canary()
	path := filepath.Join(dir, name)
	return path, c, os.WriteFile(path, []byte(c+"\n"), 0o644)
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

func probeSymlinkSubagent(ctx context.Context, e *env) Result {
	dir := filepath.Join(e.outside, "symlink-"+canary())
	file, c, err := plant(dir, "canary.txt")
	if err != nil {
		return errResult(err)
	}
	written := filepath.Join(dir, "written-by-child")
	child := steps(shell("cat ."+file+" || cat "+file), shell("echo escaped > ."+written))
	parent := []scripted.Step{
		{Calls: []scripted.Call{shell("ln -s / esc")}},
		{Calls: []scripted.Call{{Name: "spawn_agent", Args: map[string]any{
			"task": scripted.Prompt("redteam child", child...), "working_dir": "esc"}}}},
		{Calls: []scripted.Call{{Name: "wait", Args: map[string]any{"agent_id": "{{agent:0}}"}}}},
		{Text: "Done."},
	}
	o, err := e.run(ctx, spec("symlinked subagent working_dir", parent))
	if err != nil {
		return errResult(err)
	}
	if exists(written) {
		return Result{Outcome: Escaped, Evidence: "the child wrote " + written + " on the host"}
	}
	return o.escapedIf(c, "the child read the host canary", "canary not read, nothing written")
}

func probeSharedWorkdir(ctx context.Context, e *env) Result {
	dir := filepath.Join(e.outside, "shared-"+canary())
	_, c, err := plant(dir, "canary.txt")
	if err != nil {
		return errResult(err)
	}
	s := spec("shared working_dir", steps(shell("cat canary.txt"), shell("echo escaped > written.txt")))
	s.Environment = fleet.Environment{Kind: fleet.EnvLocal, WorkingDir: dir, Shared: true}
	o, err := e.run(ctx, s)
	if err != nil {
		return errResult(err)
	}
	if exists(filepath.Join(dir, "written.txt")) {
		return Result{Outcome: Escaped, Evidence: "the task wrote written.txt into the host directory " + dir}
	}
	return o.escapedIf(c, "the task read the host directory's canary", "canary not read, nothing written")
}

var capEff = regexp.MustCompile(`CapEff:\s*([0-9a-f]{16})`)

func probeCapabilities(ctx context.Context, e *env) Result {
	o, err := e.run(ctx, spec("capabilities", steps(shell("grep CapEff /proc/self/status"))))
	if err != nil {
		return errResult(err)
	}
	if o.rec != nil {
		for _, t := range o.rec.texts {
			if m := capEff.FindStringSubmatch(t); m != nil && strings.Trim(m[1], "0") != "" {
				return Result{Outcome: Escaped, Evidence: "CapEff " + m[1] + " in the task"}
			}
		}
	}
	return o.held("no non-zero CapEff")
}

// commandProbe runs one command that ends with a proof: it escapes when
// the proof is printed (the command succeeded).
func commandProbe(ctx context.Context, e *env, title, command, what string) Result {
	p, want := proof(title)
	o, err := e.run(ctx, spec(title, steps(shell(command+" && "+p))))
	if err != nil {
		return errResult(err)
	}
	return o.escapedIf(want, what, "the command failed")
}

func probeUnshare(ctx context.Context, e *env) Result {
	return commandProbe(ctx, e, "unshare", "unshare -Ur true", "`unshare -Ur true` succeeded")
}

func probeMountTmpfs(ctx context.Context, e *env) Result {
	return commandProbe(ctx, e, "mount", "mkdir -p /tmp/rt-m && mount -t tmpfs none /tmp/rt-m", "`mount -t tmpfs` succeeded")
}

func probeMknodDisk(ctx context.Context, e *env) Result {
	file, c, err := plant(filepath.Join(e.outside, "disk-"+canary()), "canary.txt")
	if err != nil {
		return errResult(err)
	}
	dev, rel, err := blockDeviceOf(file)
	if err != nil {
		return Result{Outcome: NA, Evidence: err.Error()}
	}
	if err := hostOpensDevice(e.dir, dev); err != nil {
		// Nothing can read the disk here; what a task can still do is
		// make the node, the first step.
		r := commandProbe(ctx, e, "mknod", fmt.Sprintf("mknod /dev/rt-disk b %d %d", dev.major, dev.minor),
			fmt.Sprintf("mknod of block device %d:%d succeeded", dev.major, dev.minor))
		r.Evidence += " (" + err.Error() + ")"
		return r
	}
	// A second mount of a mounted file system shares its superblock: it
	// must be read-write when the first is.
	// The node goes in /dev: the sandbox's /tmp may be mounted nodev.
	cmd := fmt.Sprintf("mknod /dev/rt-disk b %d %d && mkdir -p /tmp/rt-mnt && { mount -o ro /dev/rt-disk /tmp/rt-mnt || mount /dev/rt-disk /tmp/rt-mnt; } && cat /tmp/rt-mnt/%s",
		dev.major, dev.minor, rel)
	o, err := e.run(ctx, spec("mknod", steps(shell(cmd))))
	if err != nil {
		return errResult(err)
	}
	return o.escapedIf(c, fmt.Sprintf("read the host canary through block device %d:%d", dev.major, dev.minor), "the disk was not read")
}

// resourceProbe runs command in one task while a bystander task runs a
// few commands on the same worker: it escapes when the command's proof
// shows (it got what it asked for), the worker dies, or the bystander
// does not succeed.
func resourceProbe(ctx context.Context, e *env, title, command, what string) Result {
	p, want := proof(title)
	hog := spec(title, steps(scripted.Call{Name: "shell", Args: map[string]any{"command": command + " && " + p, "timeout": 90000}}))
	by := spec(title+" bystander", steps(shell("true"), shell("echo bystander"), shell("true")))
	hogID, refused, err := submit(ctx, e.fleet.client, hog)
	if err != nil {
		return errResult(err)
	}
	if refused != "" {
		return Result{Outcome: Held, Evidence: refused}
	}
	byID, _, err := submit(ctx, e.fleet.client, by)
	if err != nil {
		return errResult(err)
	}
	rec, err := waitRecord(ctx, e.fleet.client, hogID)
	if err != nil {
		if alive := e.fleet.alive(); alive != nil {
			return Result{Outcome: Escaped, Evidence: "the worker died: " + oneLine(alive.Error())}
		}
		return errResult(err)
	}
	brec, err := waitRecord(ctx, e.fleet.client, byID)
	switch {
	case e.fleet.alive() != nil:
		return Result{Outcome: Escaped, Evidence: "the worker died: " + oneLine(e.fleet.alive().Error())}
	case err != nil:
		return Result{Outcome: Escaped, Evidence: "the other session did not finish: " + oneLine(err.Error())}
	case brec.state() != "succeeded":
		return Result{Outcome: Escaped, Evidence: "the other session ended " + string(brec.state())}
	}
	return outcome{rec: rec}.escapedIf(want, what, "the other session succeeded, the worker lives")
}

func probeForkBomb(ctx context.Context, e *env) Result {
	// 6000 is past the worker's default process limit (4096).
	cmd := `timeout 25 bash -c 'for i in $(seq 6000); do sleep 30 & done; n=$(jobs -p | wc -l); kill $(jobs -p) 2>/dev/null; [ "$n" -ge 6000 ]'`
	return resourceProbe(ctx, e, "forkbomb", cmd, "6000 processes started in one task")
}

func probeMemoryHog(ctx context.Context, e *env) Result {
	// perl (Debian's essential perl-base) builds a 5 GiB string, touching
	// every page: past the worker's default memory limit (4 GiB). dd would
	// do too, but the default permission policy asks a person before dd.
	cmd := `timeout 60 perl -e '$x = "a" x (5 * 1024 ** 3); exit(length($x) == 5 * 1024 ** 3 ? 0 : 1)'`
	return resourceProbe(ctx, e, "memhog", cmd, "one task allocated and touched 5 GiB")
}

func probeHostFile(ctx context.Context, e *env) Result {
	file, c, err := plant(filepath.Join(e.outside, "hostfile-"+canary()), "canary.txt")
	if err != nil {
		return errResult(err)
	}
	o, err := e.run(ctx, spec("host file", steps(shell("cat "+file))))
	if err != nil {
		return errResult(err)
	}
	return o.escapedIf(c, "read the host canary", "canary not read")
}

func probeOtherWorkspace(ctx context.Context, e *env) Result {
	name := "planted-" + canary()
	file, c, err := plant(filepath.Join(e.fleet.workspace, name), "secret.txt")
	if err != nil {
		return errResult(err)
	}
	defer func() { _ = os.RemoveAll(filepath.Dir(file)) }()
	o, err := e.run(ctx, spec("other workspace", steps(shell("cat ../"+name+"/secret.txt; cat "+file))))
	if err != nil {
		return errResult(err)
	}
	return o.escapedIf(c, "read another workspace's file", "canary not read")
}

func probeWorkerProc(ctx context.Context, e *env) Result {
	file, c, err := plant(filepath.Join(e.outside, "proc-"+canary()), "canary.txt")
	if err != nil {
		return errResult(err)
	}
	cmd := fmt.Sprintf("cat /proc/%d/root%s", os.Getpid(), file)
	o, err := e.run(ctx, spec("worker proc", steps(shell(cmd))))
	if err != nil {
		return errResult(err)
	}
	return o.escapedIf(c, "read the host canary through the worker's /proc", "canary not read")
}

func probeShadow(ctx context.Context, e *env) Result {
	sum, err := sha256File("/etc/shadow")
	if err != nil {
		return Result{Outcome: NA, Evidence: "the runner cannot read /etc/shadow itself: " + oneLine(err.Error())}
	}
	o, err := e.run(ctx, spec("shadow", steps(shell("sha256sum /etc/shadow"))))
	if err != nil {
		return errResult(err)
	}
	return o.escapedIf(sum, "the task hashed the host's /etc/shadow", "/etc/shadow not read")
}

var noNewPrivs = regexp.MustCompile(`NoNewPrivs:\s*([01])`)

func probeNoNewPrivs(ctx context.Context, e *env) Result {
	o, err := e.run(ctx, spec("no new privs", steps(shell("grep NoNewPrivs /proc/self/status"))))
	if err != nil {
		return errResult(err)
	}
	if o.rec != nil {
		for _, t := range o.rec.texts {
			if m := noNewPrivs.FindStringSubmatch(t); m != nil {
				if m[1] == "0" {
					return Result{Outcome: Escaped, Evidence: "NoNewPrivs 0: a setuid binary would run privileged"}
				}
				return o.held("NoNewPrivs 1")
			}
		}
	}
	return o.held("NoNewPrivs not shown")
}
