package execenv_test

import (
	"testing"

	"github.com/agentfleet/agentfleet/execenv"
	"github.com/agentfleet/agentfleet/execenv/execenvtest"
)

func newLocal(t testing.TB, cfg execenv.LocalConfig) *execenv.Local {
	t.Helper()
	env, err := execenv.NewLocal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return env
}

func TestLocalConformance(t *testing.T) {
	execenvtest.Exercise(t, func(t *testing.T, dir string) execenv.Environment {
		return newLocal(t, execenv.LocalConfig{WorkingDir: dir})
	})
}

func TestLocalConformanceWithoutRipgrep(t *testing.T) {
	execenvtest.Exercise(t, func(t *testing.T, dir string) execenv.Environment {
		return newLocal(t, execenv.LocalConfig{WorkingDir: dir, NoRipgrep: true})
	})
}
