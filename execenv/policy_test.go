package execenv_test

import (
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/execenv"
)

// policyEnvs builds a Local and an SSH environment with a given policy.
func policyEnvs(t *testing.T, policy execenv.EnvPolicy, keepSecrets bool, maxOut int) map[string]execenv.Environment {
	srv := startSSH(t)
	sshCfg := srv.Config(t.TempDir())
	sshCfg.EnvPolicy, sshCfg.KeepSecrets, sshCfg.MaxOutputBytes = policy, keepSecrets, maxOut
	return map[string]execenv.Environment{
		"local": newLocal(t, execenv.LocalConfig{WorkingDir: t.TempDir(), EnvPolicy: policy, KeepSecrets: keepSecrets, MaxOutputBytes: maxOut}),
		"ssh":   newSSH(t, sshCfg),
	}
}

func TestEnvPolicies(t *testing.T) {
	t.Parallel()
	probe := `echo "${AGENTFLEET_PROBE_PLAIN-unset} ${AGENTFLEET_PROBE_API_KEY-unset} ${PATH:+path} ${HOME:+home} ${REQ-unset}"`
	cases := []struct {
		policy execenv.EnvPolicy
		keep   bool
		want   string
	}{
		{execenv.EnvInheritAll, false, "visible unset path home req"},
		{execenv.EnvInheritAll, true, "visible leaked path home req"},
		{execenv.EnvCoreOnly, false, "unset unset path home req"},
		// bash gives itself a default PATH when it inherits none.
		{execenv.EnvNone, false, "unset unset path  req"},
	}
	for _, c := range cases {
		for name, env := range policyEnvs(t, c.policy, c.keep, 0) {
			res, err := env.Exec(testCtx(t), execenv.ExecRequest{Command: probe, Env: map[string]string{"REQ": "req"}})
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.TrimSuffix(res.Stdout, "\n"); got != c.want {
				t.Errorf("%s policy %s keepSecrets=%v: %q, want %q (stderr %q)", name, c.policy, c.keep, got, c.want, res.Stderr)
			}
		}
	}
}

func TestOutputIsBoundedButStreamedWhole(t *testing.T) {
	t.Parallel()
	for name, env := range policyEnvs(t, "", false, 1000) {
		var streamed int
		res, err := env.Exec(testCtx(t), execenv.ExecRequest{
			Command:  "printf 'HEAD'; head -c 100000 /dev/zero | tr '\\0' x; printf 'TAIL'",
			OnOutput: func(_ execenv.OutputStream, c []byte) { streamed += len(c) },
		})
		if err != nil {
			t.Fatal(err)
		}
		if streamed != 100008 {
			t.Errorf("%s: OnOutput saw %d bytes, want all 100008", name, streamed)
		}
		if res.OmittedBytes != 100008-1000 {
			t.Errorf("%s: OmittedBytes = %d, want %d", name, res.OmittedBytes, 100008-1000)
		}
		if !strings.HasPrefix(res.Stdout, "HEADxxx") || !strings.HasSuffix(res.Stdout, "xxxTAIL") || !strings.Contains(res.Stdout, "99008 bytes of output omitted") {
			t.Errorf("%s: kept output %d bytes, without the expected head, marker and tail: %.40q", name, len(res.Stdout), res.Stdout)
		}
	}
}
