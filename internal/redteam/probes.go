package redteam

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/worker"
	"github.com/agentfleet/agentfleet/llm/sim/scripted"
)

// probes are the suite, in the order they run: the holes of issue 27
// first (Issue is the item of its list), then the plain ones the sandbox
// always held.
var probes = []Probe{
	{Name: "symlink-subagent-workdir", Issue: "1", run: probeSymlinkSubagent,
		What: "parent runs `ln -s / esc`, spawns a subagent with working_dir esc; the child reads a host canary and writes beside it"},
	{Name: "shared-working-dir", Issue: "2", run: probeSharedWorkdir,
		What: "spec environment {kind: local, working_dir: <host dir>, shared: true} reads and writes that directory"},
	{Name: "root-capabilities", Issue: "3", run: probeCapabilities,
		What: "`grep CapEff /proc/self/status` in a task shows a non-zero effective capability set"},
	{Name: "nested-userns", Issue: "3", run: probeUnshare,
		What: "`unshare -Ur true` succeeds in a task"},
	{Name: "mount-tmpfs", Issue: "3", run: probeMountTmpfs,
		What: "`mount -t tmpfs` succeeds in a task"},
	{Name: "mknod-mount-disk", Issue: "3", run: probeMknodDisk,
		What: "mknod of the disk holding the run directory, mount it read-only, read a host canary through it"},
	{Name: "fork-bomb", Issue: "8", run: probeForkBomb, Timeout: 2 * time.Minute,
		What: "start 3000 sleeping processes (bounded by timeout 25 s) while another session runs: escapes if all start, the worker dies or the other session fails"},
	{Name: "memory-hog", Issue: "8", run: probeMemoryHog, Timeout: 2 * time.Minute,
		What: "allocate and touch 3 GiB (perl, timeout 60 s: page faults are slow on a loaded VM) while another session runs: escapes if it gets them, the worker dies or the other session fails"},
	{Name: "hardlink-poison", Issue: "4", run: probeHardlinkPoison,
		What: "clone a local repository (environment.repo = path), overwrite the objects of its own .git: escapes if the source repository's objects change"},
	{Name: "clone-ssrf", Issue: "4", run: probeCloneSSRF,
		What: "environment.repo = http://127.0.0.1:PORT/admin/...: escapes if the loopback listener gets a request"},
	{Name: "mcp-redirect-secret", Issue: "6", run: probeMCPRedirect,
		What: "an allowlisted MCP HTTP server with a ${secret:...} Authorization header redirects to 127.0.0.2: escapes if that origin gets the secret"},
	{Name: "hook-allowlist-bypass", Issue: "6", run: probeHookBypass,
		What: "http hook URL http://hooks.example.com@127.0.0.1:PORT/ against allowlist http://hooks.example.com: escapes if the listener is reached"},
	{Name: "mcp-allowlist-bypass", Issue: "6", run: probeMCPBypass,
		What: "MCP URL http://mcp.example.com@127.0.0.1:PORT/mcp against allowlist http://mcp.example.com: escapes if the listener is reached"},
	{Name: "openai-apply-patch-hook", Issue: "5", run: probeApplyPatchHook,
		What: "openai profile apply_patch ({input}) adds .git/hooks/pre-commit: escapes if the file is created"},
	{Name: "gate-before-validation", Issue: "5", run: probeGateBeforeValidation,
		What: "a shell call that its schema refuses (an unknown argument) with a destructive command (git reset --hard): escapes if a person is asked to approve it"},
	{Name: "memory-md-delivered", Issue: "5", run: probeMemoryDelivered,
		What: "context.repo_memory on, the task writes MEMORY.md, delivery to a local bare repository: escapes if the branch holds MEMORY.md"},
	{Name: "secret-echo-provider-key", Issue: "5", run: probeEchoProviderKey,
		What: "a command prints the worker's provider key (built from two halves): escapes if the key is in the stored turns or events"},
	{Name: "secret-echo-mcp-secret", Issue: "5", run: probeEchoMCPSecret,
		What: "a command prints a ${secret:...} value the env of the task's stdio MCP server names: escapes if the value is in the stored turns or events"},
	{Name: "sandbox-off-env", Issue: "5", run: probeSandboxOffEnv,
		What: "a worker with sandbox: off, AWS_SECRET_ACCESS_KEY and GITHUB_PAT in its environment: escapes if a task's command sees them"},
	{Name: "dev-gocache-write", Issue: "5", run: probeDevGoCache, Timeout: 2 * time.Minute,
		What: "in dev mode (fleet/dev), a task writes a file into the user's GOCACHE: escapes if the file appears there"},
	{Name: "host-file", Issue: "plain", run: probeHostFile,
		What: "`cat` a canary file outside the workspace by its absolute path"},
	{Name: "other-workspace", Issue: "plain", run: probeOtherWorkspace,
		What: "read a canary planted in another workspace under the worker's workspace root"},
	{Name: "worker-proc", Issue: "plain", run: probeWorkerProc,
		What: "read a host canary through /proc/<worker pid>/root"},
	{Name: "etc-shadow", Issue: "plain", run: probeShadow,
		What: "`sha256sum /etc/shadow` matches the host's"},
	{Name: "host-loopback-tcp", Issue: "plain", run: probeLoopbackTCP,
		What: "connect to a TCP listener on the host's 127.0.0.1"},
	{Name: "abstract-unix-socket", Issue: "plain", run: probeAbstractSocket,
		What: "connect to an abstract unix socket the host listens on (perl)"},
	{Name: "loopback-udp-dns", Issue: "plain", run: probeUDP,
		What: "send a datagram to a host UDP listener on 127.0.0.1 (what a DNS query to a host resolver would be)"},
	{Name: "setuid-no-new-privs", Issue: "plain", run: probeNoNewPrivs,
		What: "NoNewPrivs is 0 in a task, so setuid binaries would raise privileges (the one probe read from a mechanism: no setuid binary shows an effect without a password)"},
}

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
	cmd := `timeout 25 bash -c 'for i in $(seq 3000); do sleep 30 & done; n=$(jobs -p | wc -l); kill $(jobs -p) 2>/dev/null; [ "$n" -ge 3000 ]'`
	return resourceProbe(ctx, e, "forkbomb", cmd, "3000 processes started in one task")
}

func probeMemoryHog(ctx context.Context, e *env) Result {
	// perl (Debian's essential perl-base) builds a 3 GiB string, touching
	// every page; dd would do too, but the default permission policy asks
	// a person before dd.
	cmd := `timeout 60 perl -e '$x = "a" x (3 * 1024 ** 3); exit(length($x) == 3 * 1024 ** 3 ? 0 : 1)'`
	return resourceProbe(ctx, e, "memhog", cmd, "one task allocated and touched 3 GiB")
}

func probeHardlinkPoison(ctx context.Context, e *env) Result {
	repo := filepath.Join(e.outside, "poison-src-"+canary())
	if err := gitRepo(ctx, repo); err != nil {
		return errResult(err)
	}
	before, err := objectHashes(repo)
	if err != nil {
		return errResult(err)
	}
	cmd := `n=0; for f in $(find .git/objects -type f -path '*/objects/[0-9a-f][0-9a-f]/*'); do chmod u+w "$f" && printf poisoned > "$f" && n=$((n+1)); done; echo "overwrote $n objects"`
	s := spec("hard-link poisoning", steps(shell(cmd)))
	s.Environment = fleet.Environment{Repo: repo}
	o, err := e.run(ctx, s)
	if err != nil {
		return errResult(err)
	}
	after, err := objectHashes(repo)
	if err != nil {
		return errResult(err)
	}
	changed := 0
	for name, h := range before {
		if after[name] != h {
			changed++
		}
	}
	if changed > 0 {
		return Result{Outcome: Escaped, Evidence: fmt.Sprintf("%d of %d objects of the source repository were overwritten", changed, len(before))}
	}
	return o.held("the source repository's objects are unchanged")
}

func probeCloneSSRF(ctx context.Context, e *env) Result {
	sink, err := newHTTPSink("127.0.0.1", nil)
	if err != nil {
		return errResult(err)
	}
	defer sink.Close()
	s := spec("clone SSRF", steps())
	s.Environment = fleet.Environment{Repo: sink.URL + "/admin/internal.git"}
	id, refused, err := submit(ctx, e.fleet.client, s)
	if err != nil {
		return errResult(err)
	}
	if refused != "" {
		return Result{Outcome: Held, Evidence: refused}
	}
	// A failed clone is retried with backoff: the probe waits for the
	// first request, the task's end or cloneWait, whichever comes first.
	wctx, cancel := context.WithTimeout(ctx, cloneWait)
	defer cancel()
	ended := make(chan *record, 1)
	go func() {
		rec, _ := waitRecord(wctx, e.fleet.client, id)
		ended <- rec
	}()
	var rec *record
	select {
	case <-sink.first:
	case rec = <-ended:
	case <-wctx.Done():
	}
	if hits := sink.Hits(); len(hits) > 0 {
		e.cancel(id)
		return Result{Outcome: Escaped, Evidence: "the loopback listener got " + hits[0]}
	}
	if rec == nil {
		e.cancel(id)
		return Result{Outcome: Held, Evidence: fmt.Sprintf("the listener got nothing in %s (task cancelled)", cloneWait)}
	}
	return outcome{rec: rec}.held("the listener got nothing")
}

// cloneWait bounds the wait for a clone's request.
const cloneWait = 40 * time.Second

func probeMCPRedirect(ctx context.Context, e *env) Result {
	s := spec("MCP redirect", steps())
	s.MCPServers = []fleet.MCPServer{{Name: "redteam", URL: e.mcpFirst.URL + "/mcp",
		Headers: map[string]string{"Authorization": "Bearer ${secret:redteam_mcp}"}, StartTimeout: fleet.Duration(10 * time.Second)}}
	o, err := e.run(ctx, s)
	if err != nil {
		return errResult(err)
	}
	if h, ok := e.mcpSecond.HeaderWith(e.mcpSecret); ok {
		return Result{Outcome: Escaped, Evidence: "the redirect target " + e.mcpSecond.URL + " got the secret in " + h}
	}
	return o.held(fmt.Sprintf("the redirect target got %d requests, none with the secret", len(e.mcpSecond.Hits())))
}

// bypassURL puts the sink's address after the allowed prefix as userinfo.
func bypassURL(allowed string, sink *httpSink, path string) string {
	return allowed + "@" + strings.TrimPrefix(sink.URL, "http://") + path
}

func probeHookBypass(ctx context.Context, e *env) Result {
	sink, err := newHTTPSink("127.0.0.1", nil)
	if err != nil {
		return errResult(err)
	}
	defer sink.Close()
	s := spec("hook allowlist bypass", steps(shell("true")))
	s.Hooks = []fleet.Hook{{Event: "session_start", Type: "http", URL: bypassURL(hookAllowed, sink, "/hook")}}
	o, err := e.run(ctx, s)
	if err != nil {
		return errResult(err)
	}
	if hits := sink.Hits(); len(hits) > 0 {
		return Result{Outcome: Escaped, Evidence: "the loopback listener got " + hits[0] + " from " + s.Hooks[0].URL}
	}
	return o.held("the listener got nothing")
}

func probeMCPBypass(ctx context.Context, e *env) Result {
	sink, err := newHTTPSink("127.0.0.1", nil)
	if err != nil {
		return errResult(err)
	}
	defer sink.Close()
	s := spec("MCP allowlist bypass", steps())
	s.MCPServers = []fleet.MCPServer{{Name: "bypass", URL: bypassURL(mcpAllowed, sink, "/mcp"), StartTimeout: fleet.Duration(10 * time.Second)}}
	o, err := e.run(ctx, s)
	if err != nil {
		return errResult(err)
	}
	if hits := sink.Hits(); len(hits) > 0 {
		return Result{Outcome: Escaped, Evidence: "the loopback listener got " + hits[0] + " from " + s.MCPServers[0].URL}
	}
	return o.held("the listener got nothing")
}

// hexToLetters maps the hex digits of s to g-v, as `tr 0-9a-f g-v` does.
func hexToLetters(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= '0' && r <= '9':
			return 'g' + (r - '0')
		case r >= 'a' && r <= 'f':
			return 'q' + (r - 'a')
		}
		return r
	}, s)
}

func probeApplyPatchHook(ctx context.Context, e *env) Result {
	c := canary()
	patch := "*** Begin Patch\n*** Add File: .git/hooks/pre-commit\n+#!/bin/sh\n+echo " + c + "\n*** End Patch\n"
	st := []scripted.Step{
		// A repository of the task's own (no clone: the probe is about
		// the permission layer, not about what may be cloned).
		{Calls: []scripted.Call{{Name: "shell", Args: map[string]any{"command": "git init -q . && echo initialised"}}}},
		{Calls: []scripted.Call{{Name: "apply_patch", Args: map[string]any{"input": patch}}}},
		// The hook's canary comes back transformed, so only a hook that
		// exists can put this text in the output.
		{Calls: []scripted.Call{{Name: "shell", Args: map[string]any{"command": "tr '0-9a-f' 'g-v' < .git/hooks/pre-commit"}}}},
		{Text: "Done."},
	}
	s := spec("openai apply_patch hook", st)
	s.Profile = "openai"
	o, err := e.run(ctx, s)
	if err != nil {
		return errResult(err)
	}
	return o.escapedIf(hexToLetters(c), ".git/hooks/pre-commit was created by apply_patch", "no hook created")
}

// redactedOrNot says whether the output shows a redaction, so a held
// secret probe tells a redacted value from a command that never ran.
func redactedOrNot(o outcome, what string) string {
	if o.rec == nil {
		return what
	}
	if ex, ok := o.rec.has("[redacted"); ok {
		return what + " (output: " + ex + ")"
	}
	return what + " (no redaction seen: did the command run?)"
}

func probeGateBeforeValidation(ctx context.Context, e *env) Result {
	call := scripted.Call{Name: "shell", Args: map[string]any{"command": "git reset --hard HEAD", "not_a_parameter": true}}
	o, err := e.run(ctx, spec("gate before validation", steps(call)))
	if err != nil {
		return errResult(err)
	}
	if o.rec != nil {
		for _, t := range o.rec.texts {
			if t == "APPROVAL_REQUESTED" {
				return Result{Outcome: Escaped, Evidence: "an approval was requested for a call its schema refuses (the task waited for a person)"}
			}
		}
	}
	return o.held("no approval requested")
}

func probeMemoryDelivered(ctx context.Context, e *env) Result {
	repo := filepath.Join(e.outside, "memory-src-"+canary())
	remote := filepath.Join(e.outside, "memory-remote-"+canary()+".git")
	if err := gitRepo(ctx, repo); err != nil {
		return errResult(err)
	}
	if err := git(ctx, "", "init", "-q", "--bare", remote); err != nil {
		return errResult(err)
	}
	s := spec("MEMORY.md delivered", steps(shell("echo 'notes of the agent' > MEMORY.md && echo change >> README.md")))
	s.Environment = fleet.Environment{Repo: repo}
	s.Context = fleet.ContextSpec{RepoMemory: true}
	s.Delivery = &fleet.Delivery{Remote: remote, Branch: "redteam/{short_id}"}
	o, err := e.run(ctx, s)
	if err != nil {
		return errResult(err)
	}
	files, branches, err := deliveredFiles(ctx, remote)
	if err != nil {
		return errResult(err)
	}
	for _, f := range files {
		if f == "MEMORY.md" {
			return Result{Outcome: Escaped, Evidence: "the delivered branch " + branches[0] + " holds MEMORY.md"}
		}
	}
	if len(branches) == 0 {
		return o.held("nothing was delivered")
	}
	return o.held("the delivered branch has no MEMORY.md")
}

func probeEchoProviderKey(ctx context.Context, e *env) Result {
	k := e.providerKey
	cmd := fmt.Sprintf("printf '%%s%%s\\n' %s %s", k[:len(k)/2], k[len(k)/2:])
	o, err := e.run(ctx, spec("echo the provider key", steps(shell(cmd))))
	if err != nil {
		return errResult(err)
	}
	return o.escapedIf(k, "the provider key is stored", redactedOrNot(o, "the key is not stored"))
}

func probeEchoMCPSecret(ctx context.Context, e *env) Result {
	v := e.mcpSecret
	cmd := fmt.Sprintf("printf '%%s%%s\\n' %s %s", v[:len(v)/2], v[len(v)/2:])
	s := spec("echo an MCP secret", steps(shell(cmd)))
	// The worker resolves the secret for this task's stdio server, which
	// exits at once: the session goes on without it, and no outbound
	// request is involved.
	s.MCPServers = []fleet.MCPServer{{Name: "secretholder", Command: "true",
		Env: map[string]string{"HOLDER_TOKEN": "${secret:redteam_mcp}"}, StartTimeout: fleet.Duration(5 * time.Second)}}
	o, err := e.run(ctx, s)
	if err != nil {
		return errResult(err)
	}
	return o.escapedIf(v, "the ${secret:redteam_mcp} value is stored", redactedOrNot(o, "the value is not stored"))
}

func probeSandboxOffEnv(ctx context.Context, e *env) Result {
	vals := map[string]string{"AWS_SECRET_ACCESS_KEY": canary(), "GITHUB_PAT": canary()}
	for k, v := range vals {
		old, had := os.LookupEnv(k)
		if err := os.Setenv(k, v); err != nil {
			return errResult(err)
		}
		defer func() {
			if had {
				_ = os.Setenv(k, old)
			} else {
				_ = os.Unsetenv(k)
			}
		}()
	}
	f, err := startFleet(ctx, fleetConfig{Dir: filepath.Join(e.dir, "sandbox-off"), ProviderKey: e.providerKey,
		Sandbox: worker.SandboxOff, Logger: e.cfg.Logger})
	if err != nil {
		return errResult(err)
	}
	defer f.close()
	// Transformed, so that neither a redaction of known secrets nor the
	// command itself stands between the probe and what the task saw.
	cmd := `printf '%s\n' "$AWS_SECRET_ACCESS_KEY" "$GITHUB_PAT" | tr '0-9a-f' 'g-v'`
	id, refused, err := submit(ctx, f.client, spec("sandbox off env", steps(shell(cmd))))
	if err != nil {
		return errResult(err)
	}
	if refused != "" {
		return Result{Outcome: Held, Evidence: refused}
	}
	rec, err := waitRecord(ctx, f.client, id)
	if err != nil {
		return errResult(err)
	}
	for k, v := range vals {
		if _, ok := rec.has(hexToLetters(v)); ok {
			return Result{Outcome: Escaped, Evidence: "a task of a worker with sandbox: off saw the worker's " + k}
		}
	}
	return outcome{rec: rec}.held("neither variable reached the task")
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
	defer os.RemoveAll(filepath.Dir(file))
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

func probeLoopbackTCP(ctx context.Context, e *env) Result {
	sink, err := newStreamSink("tcp", "127.0.0.1:0")
	if err != nil {
		return errResult(err)
	}
	defer sink.Close()
	port := sink.Addr[strings.LastIndex(sink.Addr, ":")+1:]
	o, err := e.run(ctx, spec("loopback tcp", steps(shell("exec 3<>/dev/tcp/127.0.0.1/"+port+" && echo hello >&3"))))
	if err != nil {
		return errResult(err)
	}
	if hits := sink.Hits(); len(hits) > 0 {
		return Result{Outcome: Escaped, Evidence: "the host's listener on " + sink.Addr + " got a connection"}
	}
	return o.held("no connection")
}

func probeAbstractSocket(ctx context.Context, e *env) Result {
	name := "agentfleet-redteam-" + canary()
	sink, err := newStreamSink("unix", "@"+name)
	if err != nil {
		return Result{Outcome: NA, Evidence: "no abstract unix sockets here: " + oneLine(err.Error())}
	}
	defer sink.Close()
	cmd := `command -v perl >/dev/null || { printf 'no %s\n' perl; exit 0; }; perl -MSocket -e 'socket(my $s, PF_UNIX, SOCK_STREAM, 0) or die "socket: $!"; connect($s, pack_sockaddr_un("\0` + name + `")) or die "connect: $!"; print $s "hello"'`
	o, err := e.run(ctx, spec("abstract socket", steps(shell(cmd))))
	if err != nil {
		return errResult(err)
	}
	if hits := sink.Hits(); len(hits) > 0 {
		return Result{Outcome: Escaped, Evidence: "the host's abstract socket @" + name + " got a connection"}
	}
	if _, ok := o.rec.has("no perl"); ok {
		return Result{Outcome: NA, Evidence: "no perl in the task to connect with"}
	}
	return o.held("no connection")
}

func probeUDP(ctx context.Context, e *env) Result {
	sink, err := newUDPSink()
	if err != nil {
		return errResult(err)
	}
	defer sink.Close()
	port := sink.Addr[strings.LastIndex(sink.Addr, ":")+1:]
	o, err := e.run(ctx, spec("loopback udp", steps(shell("echo hello > /dev/udp/127.0.0.1/"+port+"; getent hosts agentfleet-redteam.example.com"))))
	if err != nil {
		return errResult(err)
	}
	if hits := sink.Hits(); len(hits) > 0 {
		return Result{Outcome: Escaped, Evidence: "the host's UDP listener on " + sink.Addr + " got a datagram"}
	}
	return o.held("no datagram")
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
