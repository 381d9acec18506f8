package execenv_test

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agentfleet/agentfleet/execenv"
)

func TestTimeoutMessageIsTheSpecText(t *testing.T) {
	want := "[ERROR: Command timed out after 1500ms. Partial output is shown above.\n" +
		"You can retry with a longer timeout by setting the timeout_ms parameter.]"
	if got := execenv.TimeoutMessage(1500 * time.Millisecond); got != want {
		t.Fatalf("TimeoutMessage = %q", got)
	}
}

func TestFilterEnv(t *testing.T) {
	environ := []string{"PATH=/bin", "HOME=/root", "OPENAI_API_KEY=k", "github_token=t", "DB_PASSWORD=p", "AWS_SECRET=s",
		"GCP_CREDENTIAL=c", "LC_ALL=C", "GOPATH=/go", "EDITOR=vi", "TOKENIZER=x"}
	cases := []struct {
		policy execenv.EnvPolicy
		keep   bool
		want   []string
	}{
		{"", false, []string{"PATH=/bin", "HOME=/root", "LC_ALL=C", "GOPATH=/go", "EDITOR=vi", "TOKENIZER=x"}},
		{execenv.EnvInheritAll, true, environ},
		{execenv.EnvCoreOnly, false, []string{"PATH=/bin", "HOME=/root", "LC_ALL=C", "GOPATH=/go"}},
		{execenv.EnvNone, false, []string{}},
	}
	for _, c := range cases {
		if got := execenv.FilterEnv(environ, c.policy, c.keep); !reflect.DeepEqual(got, c.want) {
			t.Errorf("FilterEnv(%q, keep=%v) = %v, want %v", c.policy, c.keep, got, c.want)
		}
	}
}

func TestLocalConfigValidate(t *testing.T) {
	cases := []struct {
		cfg  execenv.LocalConfig
		want string
	}{
		{execenv.LocalConfig{EnvPolicy: "all"}, "LocalConfig.EnvPolicy"},
		{execenv.LocalConfig{DefaultTimeout: -1}, "LocalConfig.DefaultTimeout"},
		{execenv.LocalConfig{DefaultTimeout: time.Hour}, "must not exceed MaxTimeout"},
		{execenv.LocalConfig{MaxOutputBytes: -5}, "LocalConfig.MaxOutputBytes"},
	}
	for _, c := range cases {
		if _, err := execenv.NewLocal(c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("NewLocal(%+v) error = %v, want one naming %q", c.cfg, err, c.want)
		}
	}
	cfg := execenv.LocalConfig{}.WithDefaults()
	if cfg.DefaultTimeout != 10*time.Second || cfg.MaxTimeout != 10*time.Minute || cfg.MaxOutputBytes != 16<<20 || cfg.EnvPolicy != execenv.EnvInheritAll || cfg.WorkingDir == "" {
		t.Fatalf("defaults = %+v", cfg)
	}
}

func TestTimeoutIsCappedByMax(t *testing.T) {
	t.Parallel()
	env := newLocal(t, execenv.LocalConfig{WorkingDir: t.TempDir(), MaxTimeout: 3 * time.Second, DefaultTimeout: time.Second})
	res, err := env.Exec(context.Background(), execenv.ExecRequest{Command: "echo go; sleep 60", Timeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if !res.TimedOut || !strings.Contains(res.Stderr, "timed out after 3000ms") {
		t.Fatalf("an hour-long request must be capped at MaxTimeout: %+v", res)
	}
}

func TestDescriptionRoundTrip(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	local := newLocal(t, execenv.LocalConfig{WorkingDir: t.TempDir(), Shared: true})
	rebuilt, err := execenv.FromDescription(ctx, local.Describe(), nil, execenv.Rebuild{})
	if err != nil || !reflect.DeepEqual(rebuilt.Describe(), local.Describe()) {
		t.Fatalf("local round trip: %+v, %v", rebuilt, err)
	}

	srv := startSSH(t)
	cfg := srv.Config(t.TempDir())
	cfg.KeyRef = "fleet-key"
	orig := newSSH(t, cfg)
	if err := orig.Initialize(ctx); err != nil {
		t.Fatal(err)
	}
	desc := orig.Describe()
	if desc.Kind != execenv.KindSSH || !desc.Shared || desc.KeyRef != "fleet-key" || desc.Port != srv.Port {
		t.Fatalf("ssh description = %+v", desc)
	}
	var asked string
	resolver := execenv.ResolverFunc(func(_ context.Context, ref string) (execenv.SSHCredentials, error) {
		asked = ref
		return execenv.SSHCredentials{KeyFile: srv.KeyFile, KnownHostsFile: srv.KnownHostsFile}, nil
	})
	env, err := execenv.FromDescription(ctx, desc, resolver, execenv.Rebuild{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Cleanup(context.Background()) })
	if err := env.Initialize(ctx); err != nil {
		t.Fatal(err)
	}
	if asked != "fleet-key" || !reflect.DeepEqual(env.Describe(), desc) {
		t.Fatalf("rebuilt %+v (resolver asked for %q), want %+v", env.Describe(), asked, desc)
	}
	if res, err := env.Exec(ctx, execenv.ExecRequest{Command: "pwd"}); err != nil || res.Stdout != desc.WorkingDir+"\n" {
		t.Fatalf("rebuilt env runs in %q, %v", res.Stdout, err)
	}
	if _, err := execenv.FromDescription(ctx, desc, nil, execenv.Rebuild{}); err == nil || !strings.Contains(err.Error(), "Resolver") {
		t.Fatalf("missing resolver error = %v", err)
	}
	if _, err := execenv.FromDescription(ctx, execenv.Description{Kind: "docker"}, nil, execenv.Rebuild{}); err == nil || !strings.Contains(err.Error(), "docker") {
		t.Fatalf("unknown kind error = %v", err)
	}
}
