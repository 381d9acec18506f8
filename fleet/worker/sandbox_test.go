package worker_test

import (
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/execenv/sandbox"
	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/fleettest"
	"github.com/agentfleet/agentfleet/fleet/worker"
	"github.com/agentfleet/agentfleet/internal/testenv"
	"github.com/agentfleet/agentfleet/store"
)

// escapeProbe is what a task tries from its shell and its file tools,
// and where to look on the host afterwards.
type escapeProbe struct {
	config, other, outside string // a config file with a key, another task's file, a path outside the workspace
	steps                  []fleettest.Step
}

// newEscapeProbe plants the worker's secrets next to its workspaces and
// scripts a task that tries to reach them, the NATS server, a listener
// standing for Postgres on the host's loopback, and the model's server.
func newEscapeProbe(t *testing.T, f *fleettest.Fleet, workspaceRoot string) escapeProbe {
	t.Helper()
	dir := t.TempDir()
	p := escapeProbe{config: filepath.Join(dir, "worker.yaml"), other: filepath.Join(workspaceRoot, "other-task", "notes.txt"),
		outside: filepath.Join(dir, "escaped")}
	if err := os.WriteFile(p.config, []byte("providers:\n  anthropic:\n    api_key: sk-config-secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(p.other), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p.other, []byte("another task's notes"), 0o644); err != nil {
		t.Fatal(err)
	}
	pg, err := net.Listen("tcp", "127.0.0.1:0") // stands for Postgres
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pg.Close() })
	natsURL, _ := url.Parse(f.NATS.URL)
	modelURL, _ := url.Parse(f.Model.URL())
	dial := func(hostport string) string {
		host, port, _ := net.SplitHostPort(hostport)
		return "exec 3<>/dev/tcp/" + host + "/" + port
	}
	script := `check() { if ( eval "$2" ) >/dev/null 2>&1; then echo "ESCAPED $1"; else echo "blocked $1"; fi; }
check config 'grep -q sk-config-secret ` + p.config + `'
check environ 'cat /proc/*/environ | grep -aq sk-env-secret'
check other 'cat ` + p.other + `'
check write 'echo x > ` + p.outside + ` && echo x > /usr/agentfleet-escaped'
ln -s ` + p.config + ` link
check symlink 'grep -q sk-config-secret link'
check nats '` + dial(natsURL.Host) + `'
check postgres '` + dial(pg.Addr().String()) + `'
check egress '` + dial(modelURL.Host) + `'`
	read := func(path string) fleettest.Call {
		return fleettest.Call{Name: "read_file", Args: map[string]any{"file_path": path}}
	}
	p.steps = []fleettest.Step{
		{Calls: []fleettest.Call{fleettest.Shell(script)}},
		{Calls: []fleettest.Call{read("link"), read(p.config), read("/proc/1/environ"), read(p.other)}},
		{Text: "report: {{results}}"},
	}
	return p
}

// From inside a task's shell and file tools, nothing of the worker is
// reachable: its config file with a provider key, its environment (the
// /proc of its processes), another task's workspace, a path outside the
// workspace, a planted symbolic link (by read_file and by cat), the NATS
// and Postgres ports, any other network. The task's result names the
// sandbox. The same task on a worker with sandbox: off escapes, which
// shows the probes can tell.
func TestTaskShellIsConfined(t *testing.T) {
	if err := sandbox.Available(); err != nil {
		testenv.SkipOrFatal(t, err.Error())
	}
	t.Setenv("AGENTFLEET_TEST_PROVIDER_SECRET", "sk-env-secret")
	var roots [2]string
	f := fleettest.Start(t, fleettest.Options{Workers: 1, Worker: func(i int, c *worker.Config) {
		c.Sandbox, roots[i] = worker.SandboxOn, c.WorkspaceRoot
	}})
	probe := newEscapeProbe(t, f, roots[0])
	res := succeeded(t, f.WaitDone(f.Submit(fleettest.Spec("confined", probe.steps...))))
	if res.Sandbox != "bwrap, network none" {
		t.Errorf("result.sandbox %q, want the bubblewrap sandbox without network", res.Sandbox)
	}
	for _, name := range []string{"config", "environ", "other", "write", "symlink", "nats", "postgres", "egress"} {
		if !strings.Contains(res.FinalText, "blocked "+name) {
			t.Errorf("probe %s was not blocked", name)
		}
	}
	for _, secret := range []string{"ESCAPED", "sk-config-secret", "sk-env-secret", "another task's notes"} {
		if strings.Contains(res.FinalText, secret) {
			t.Errorf("the task reached %q:\n%s", secret, res.FinalText)
		}
	}
	if strings.Count(res.FinalText, "outside the allowed directories") < 4 {
		t.Errorf("want the 4 read_file calls refused as outside the workspace:\n%s", res.FinalText)
	}
	if _, err := os.Stat(probe.outside); err == nil {
		t.Error("the task wrote outside its workspace")
	}

	off := f.WorkerConfig(1)
	off.Sandbox = worker.SandboxOff
	f.Workers()[0].Stop(t)
	f.StartWorkerWith(off)
	open := newEscapeProbe(t, f, off.WorkspaceRoot)
	res = succeeded(t, f.WaitDone(f.Submit(fleettest.Spec("unconfined", open.steps...))))
	if res.Sandbox != worker.SandboxOff || !strings.Contains(res.FinalText, "ESCAPED config") || !strings.Contains(res.FinalText, "ESCAPED nats") {
		t.Fatalf("with sandbox off the probes should escape; sandbox %q:\n%s", res.Sandbox, res.FinalText)
	}
}

// A task whose spec asks for more network than the worker allows fails
// with the reason, naming the field and the worker's bound.
func TestWorkerRefusesAWiderSandbox(t *testing.T) {
	if err := sandbox.Available(); err != nil {
		testenv.SkipOrFatal(t, err.Error())
	}
	t.Parallel()
	f := fleettest.Start(t, fleettest.Options{Workers: 1, Worker: func(_ int, c *worker.Config) {
		c.Sandbox = worker.SandboxOn
		c.SandboxBound = fleet.SandboxBound{AllowHosts: []string{"github.com"}}
	}})
	spec := fleettest.Spec("wide", fleettest.Step{Text: "done"})
	spec.Sandbox = fleet.SandboxSpec{Network: fleet.SandboxNetworkFull}
	task := f.WaitDone(f.Submit(spec))
	res := fleettest.Result(t, task)
	if task.State != store.TaskFailed || task.Error != fleet.ReasonNotAllowed ||
		!strings.Contains(res.Error, "spec.sandbox.network") || !strings.Contains(res.Error, "sandbox_network: allowlist") {
		t.Fatalf("state %s, reason %q, error %q; want not allowed naming spec.sandbox.network", task.State, task.Error, res.Error)
	}
}

// A worker whose sandbox is on but cannot start bubblewrap refuses local
// tasks saying what to install; simulated by a PATH without bwrap.
func TestWorkerWithoutBubblewrapRefusesLocalTasks(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	f := fleettest.Start(t, fleettest.Options{Workers: 1, Worker: func(_ int, c *worker.Config) { c.Sandbox = worker.SandboxOn }})
	task := f.WaitDone(f.Submit(fleettest.Spec("local", fleettest.Step{Text: "done"})))
	res := fleettest.Result(t, task)
	if task.State != store.TaskFailed || !strings.Contains(res.Error, "apt-get install bubblewrap") || !strings.Contains(res.Error, "sandbox: off") {
		t.Fatalf("state %s, error %q; want a refusal saying what to install", task.State, res.Error)
	}
}

// A task whose spec names a local server in its allowlist reaches it
// through the worker's egress proxy; a server it does not name is
// refused, and the sandbox keeps no other way out.
func TestTaskAllowlistReachesOnlyNamedHosts(t *testing.T) {
	if err := sandbox.Available(); err != nil {
		testenv.SkipOrFatal(t, err.Error())
	}
	t.Parallel()
	named, unnamed := httpServer(t, "named"), httpServer(t, "unnamed")
	f := fleettest.Start(t, fleettest.Options{Workers: 1, Worker: func(_ int, c *worker.Config) {
		c.Sandbox = worker.SandboxOn
		c.SandboxBound = fleet.SandboxBound{AllowHosts: []string{"localhost"}}
		c.OutboundAllowPrivate = []string{"127.0.0.1", "::1"} // the egress proxy may reach the test's servers
	}})
	get := func(port string) string {
		return `addr=${HTTP_PROXY#http://}; exec 3<>"/dev/tcp/${addr%:*}/${addr#*:}" && ` +
			`printf 'GET http://localhost:` + port + `/ HTTP/1.0\r\n\r\n' >&3 && cat <&3; echo`
	}
	spec := fleettest.Spec("allowlist", fleettest.Step{Calls: []fleettest.Call{
		fleettest.Shell(get(named) + "; " + get(unnamed) + "; (exec 3<>/dev/tcp/127.0.0.1/" + unnamed + ") 2>/dev/null && echo DIRECT"),
	}}, fleettest.Step{Text: "report: {{results}}"})
	spec.Sandbox = fleet.SandboxSpec{Network: fleet.SandboxNetworkAllowlist, AllowHosts: []string{"localhost:" + named}}
	res := succeeded(t, f.WaitDone(f.Submit(spec)))
	if res.Sandbox != "bwrap, network allowlist (1 host)" || !strings.Contains(res.FinalText, "hello from named") ||
		strings.Contains(res.FinalText, "hello from unnamed") || !strings.Contains(res.FinalText, "403 Forbidden") ||
		strings.Contains(res.FinalText, "DIRECT") {
		t.Fatalf("sandbox %q:\n%s", res.Sandbox, res.FinalText)
	}
}

// A subagent working in its parent's workspace runs in the same sandbox:
// its shell reaches the parent's allowlisted server, and its result
// names the parent's sandbox.
func TestSubagentSharesItsParentsSandbox(t *testing.T) {
	if err := sandbox.Available(); err != nil {
		testenv.SkipOrFatal(t, err.Error())
	}
	t.Parallel()
	named := httpServer(t, "named")
	f := fleettest.Start(t, fleettest.Options{Workers: 1, Worker: func(_ int, c *worker.Config) {
		c.Sandbox = worker.SandboxOn
		c.SandboxBound = fleet.SandboxBound{AllowHosts: []string{"localhost"}}
		c.OutboundAllowPrivate = []string{"127.0.0.1", "::1"} // the egress proxy may reach the test's servers
	}})
	get := `addr=${HTTP_PROXY#http://}; exec 3<>"/dev/tcp/${addr%:*}/${addr#*:}" && ` +
		`printf 'GET http://localhost:` + named + `/ HTTP/1.0\r\n\r\n' >&3 && cat <&3; echo`
	spec := fleettest.Spec("parent", fanOut([][]fleettest.Step{{
		{Calls: []fleettest.Call{fleettest.Shell(get)}}, {Text: "child: {{results}}"},
	}})...)
	spec.Sandbox = fleet.SandboxSpec{Network: fleet.SandboxNetworkAllowlist, AllowHosts: []string{"localhost:" + named}}
	id := f.Submit(spec)
	res := succeeded(t, f.WaitDone(id))
	kids := children(t, f, id)
	if len(kids) != 1 || !strings.Contains(res.FinalText, "hello from named") {
		t.Fatalf("%d children; parent result:\n%s", len(kids), res.FinalText)
	}
	if kid := fleettest.Result(t, kids[0]); kid.Sandbox != res.Sandbox || res.Sandbox != "bwrap, network allowlist (1 host)" {
		t.Fatalf("child sandbox %q, parent %q; want both the parent's allowlist", kid.Sandbox, res.Sandbox)
	}
}

// httpServer serves "hello from <name>" on the host's loopback and
// returns its port.
func httpServer(t *testing.T, name string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("hello from " + name))
	}))
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	return u.Port()
}
