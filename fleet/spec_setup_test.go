package fleet_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/fleet"
)

func TestSetupValidation(t *testing.T) {
	base := func(e fleet.Environment) fleet.TaskSpec {
		return fleet.TaskSpec{Prompt: "p", Profile: "anthropic", Environment: e}.WithDefaults()
	}
	repo := "https://git.example.com/acme/app.git"
	for _, c := range []struct {
		env  fleet.Environment
		want string // "" valid, else in the error
	}{
		{fleet.Environment{Repo: repo, Setup: "go mod download"}, ""},
		{fleet.Environment{Repo: repo, Setup: "./.agentfleet/setup.sh"}, ""},
		{fleet.Environment{Setup: "make"}, "needs environment.repo"},
		{fleet.Environment{Repo: repo, Setup: "  "}, "is blank"},
		{fleet.Environment{Kind: fleet.EnvSSH, Host: "h", User: "u", KeyRef: "k", WorkingDir: "/w", Setup: "make"}, "needs a local environment"},
		{fleet.Environment{Repo: repo, Setup: "../outside/setup.sh"}, "leaves the repository"},
		{fleet.Environment{Repo: repo, Setup: "./a/../../setup.sh"}, "leaves the repository"},
		{fleet.Environment{Repo: repo, Setup: strings.Repeat("x", fleet.MaxSetupBytes+1)}, "longer than"},
	} {
		err := base(c.env).Validate()
		var fe *fleet.FieldError
		switch {
		case c.want == "" && err != nil:
			t.Errorf("setup %.40q: %v, want valid", c.env.Setup, err)
		case c.want != "" && (!errors.As(err, &fe) || fe.Field != "spec.environment.setup" || !strings.Contains(fe.Reason, c.want)):
			t.Errorf("setup %.40q: %v, want environment.setup %q", c.env.Setup, err, c.want)
		}
	}
}

func TestSetupFile(t *testing.T) {
	for setup, want := range map[string]string{
		"./.agentfleet/setup.sh": ".agentfleet/setup.sh",
		"scripts/setup":          "scripts/setup",
		"make":                   "", // one word without a slash: a command
		"/usr/bin/make":          "", // absolute: a command
		"./setup.sh --fast":      "", // arguments: a command
		"go mod download":        "",
	} {
		if got := (fleet.Environment{Setup: setup}).SetupFile(); got != want {
			t.Errorf("SetupFile(%q) = %q, want %q", setup, got, want)
		}
	}
}
