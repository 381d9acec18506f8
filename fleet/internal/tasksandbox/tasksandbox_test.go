package tasksandbox_test

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/execenv"
	"github.com/agentfleet/agentfleet/execenv/sandbox"
	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/internal/tasksandbox"
	"github.com/agentfleet/agentfleet/internal/testenv"
)

var discard = slog.New(slog.DiscardHandler)

func TestOperatorValidateNamesTheKey(t *testing.T) {
	for _, c := range []struct {
		op   tasksandbox.Operator
		want string
	}{
		{tasksandbox.Operator{Mode: "sometimes"}, `sandbox must be "on", "off" or "auto"`},
		{tasksandbox.Operator{ReadOnly: []string{"cache"}}, `sandbox_read_only entry "cache"`},
		{tasksandbox.Operator{Writable: []string{"gocache"}}, `sandbox_writable entry "gocache"`},
		{tasksandbox.Operator{Bound: fleet.SandboxBound{Network: "wide"}}, "sandbox_network must be"},
		{tasksandbox.Operator{Bound: fleet.SandboxBound{AllowHosts: []string{"ok.com", "http://x"}}}, "sandbox_allow_hosts[1]"},
		{tasksandbox.Operator{UIDRange: "5-10"}, "sandbox_uid_range"},
		{tasksandbox.Operator{UIDRange: "300000"}, "sandbox_uid_range"},
		{tasksandbox.Operator{Limits: sandbox.Limits{Pids: -1}}, "sandbox_limits: pids must be >= 0"},
	} {
		if err := c.op.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want an error containing %q", c.op, err, c.want)
		}
	}
	if err := (tasksandbox.Operator{Mode: tasksandbox.Auto, ReadOnly: []string{"/opt/x"}}).Validate(); err != nil {
		t.Errorf("a valid operator: %v", err)
	}
}

// Off builds the plain local environment and says so; on, a spec wider
// than the bound is refused before anything is built.
func TestEnvFollowsTheMode(t *testing.T) {
	env, label, err := tasksandbox.Start(tasksandbox.Operator{Mode: tasksandbox.Off}, discard).Env(execenv.LocalConfig{WorkingDir: testenv.SearchableTempDir(t)}, fleet.SandboxSpec{}, "", discard)
	if err != nil || label != tasksandbox.Label {
		t.Fatalf("off: label %q, %v", label, err)
	}
	if _, ok := env.(*execenv.Local); !ok {
		t.Fatalf("off built a %T, want the plain local environment", env)
	}
	if err := sandbox.Available(); err != nil {
		testenv.SkipOrFatal(t, err.Error())
	}
	st := tasksandbox.Start(tasksandbox.Operator{}, discard)
	_, _, err = st.Env(execenv.LocalConfig{WorkingDir: testenv.SearchableTempDir(t)}, fleet.SandboxSpec{Network: fleet.SandboxNetworkFull}, "", discard)
	var refused *tasksandbox.RefusedError
	if !errors.As(err, &refused) || !strings.Contains(refused.Reason, "spec.sandbox.network") {
		t.Fatalf("a wider spec: %v, want a refusal naming spec.sandbox.network", err)
	}
	env, label, err = st.Env(execenv.LocalConfig{WorkingDir: testenv.SearchableTempDir(t)}, fleet.SandboxSpec{}, "", discard)
	if err != nil || label != "bwrap, network none" {
		t.Fatalf("on: label %q, %v", label, err)
	}
	defer func() { _ = env.Cleanup(context.Background()) }()
	if res, err := env.Exec(context.Background(), execenv.ExecRequest{Command: "test -e /root"}); err != nil || res.ExitCode == 0 {
		t.Fatalf("the command saw /root: %+v, %v", res, err)
	}
}

// TestOffPassesAnAllowlist: with the sandbox off, a task's commands see
// the worker's core variables only, whatever the spec's env_policy asks:
// not its cloud keys, database and NATS URLs with their passwords, or
// tokens under names no denylist knows.
func TestOffPassesAnAllowlist(t *testing.T) {
	secrets := map[string]string{
		"AWS_SECRET_ACCESS_KEY":   "aws-secret-value-1234",
		"PGPASSWORD":              "pg-password-value-1234",
		"AGENTFLEET_DATABASE_URL": "postgres://fleet:db-password-1234@db.internal/fleet",
		"AGENTFLEET_NATS_URL":     "nats://fleet:nats-password-1234@nats.internal:4222",
		"GITHUB_PAT":              "ghp_pat-value-1234",
		"GOPROXY":                 "https://user:proxy-password-1234@proxy.internal,direct",
	}
	for k, v := range secrets {
		t.Setenv(k, v)
	}
	t.Setenv("TZ", "UTC")
	st := tasksandbox.Start(tasksandbox.Operator{Mode: tasksandbox.Off}, discard)
	for _, policy := range []execenv.EnvPolicy{"", execenv.EnvInheritAll, execenv.EnvCoreOnly} {
		env, _, err := st.Env(execenv.LocalConfig{WorkingDir: t.TempDir(), EnvPolicy: policy, KeepSecrets: true}, fleet.SandboxSpec{}, "", discard)
		if err != nil {
			t.Fatal(err)
		}
		res, err := env.Exec(context.Background(), execenv.ExecRequest{Command: "env"})
		if err != nil || res.ExitCode != 0 {
			t.Fatalf("env: %+v, %v", res, err)
		}
		for k, v := range secrets {
			if strings.Contains(res.Stdout, k+"=") || strings.Contains(res.Stdout, v) {
				t.Errorf("policy %q: the task sees %s:\n%s", policy, k, res.Stdout)
			}
		}
		for _, k := range []string{"PATH=", "HOME=", "TZ=UTC"} {
			if !strings.Contains(res.Stdout, k) {
				t.Errorf("policy %q: the task lacks %s:\n%s", policy, k, res.Stdout)
			}
		}
	}
	if got := tasksandbox.UnconfinedEnvPolicy(execenv.EnvNone); got != execenv.EnvNone {
		t.Errorf("a spec asking for no environment gets %q", got)
	}
}

// A spec may narrow the operator's limits, never widen them; the tasks
// of one tree share a uid, another tree gets another.
func TestLimitsNarrowAndTreesShareAUid(t *testing.T) {
	if err := sandbox.Available(); err != nil {
		testenv.SkipOrFatal(t, err.Error())
	}
	st := tasksandbox.Start(tasksandbox.Operator{UIDRange: "310000-310009", Limits: sandbox.Limits{Pids: 100}}, discard)
	_, _, err := st.Env(execenv.LocalConfig{WorkingDir: testenv.SearchableTempDir(t)},
		fleet.SandboxSpec{Limits: fleet.SandboxLimits{Pids: 200}}, "tree", discard)
	var refused *tasksandbox.RefusedError
	if !errors.As(err, &refused) || !strings.Contains(refused.Reason, "sandbox.limits.pids 200") {
		t.Fatalf("a spec asking for more processes: %v, want a refusal naming sandbox.limits.pids", err)
	}
	uid := func(tree string) uint32 {
		ws := testenv.SearchableTempDir(t)
		env, _, err := st.Env(execenv.LocalConfig{WorkingDir: ws}, fleet.SandboxSpec{Limits: fleet.SandboxLimits{Pids: 50}}, tree, discard)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = env.Cleanup(context.Background()) })
		res, err := env.Exec(context.Background(), execenv.ExecRequest{Command: "ulimit -u"})
		if err != nil || res.ExitCode != 0 || res.Stdout != "50\n" {
			t.Fatalf("the spec's process limit: %+v, %v; want 50", res, err)
		}
		fi, err := os.Stat(ws)
		if err != nil {
			t.Fatal(err)
		}
		return ownerUID(t, fi)
	}
	a1, a2, b := uid("tree-a"), uid("tree-a"), uid("tree-b")
	if os.Geteuid() == 0 && (a1 != a2 || a1 == b || a1 < 310000 || a1 > 310009) {
		t.Fatalf("workspace owners %d %d %d; want tree-a's twice and tree-b's, all of the range", a1, a2, b)
	}
}
