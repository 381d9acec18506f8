package execenv_test

import (
	"testing"

	"github.com/agentfleet/agentfleet/execenv"
	"github.com/agentfleet/agentfleet/execenv/execenvtest"
	"github.com/agentfleet/agentfleet/execenv/sshtest"
)

// startSSH starts an sshd whose sessions carry the conformance probe variables.
func startSSH(t *testing.T) *sshtest.Server {
	t.Helper()
	return sshtest.StartWith(t, sshtest.Options{SetEnv: execenvtest.ProbeEnv})
}

func newSSH(t *testing.T, cfg execenv.SSHConfig) *execenv.SSH {
	t.Helper()
	env, err := execenv.NewSSH(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return env
}

func TestSSHConformance(t *testing.T) {
	srv := startSSH(t)
	execenvtest.Exercise(t, func(t *testing.T, dir string) execenv.Environment {
		return newSSH(t, srv.Config(dir))
	})
}
