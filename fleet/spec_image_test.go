package fleet_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/fleet"
)

const digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func TestImagePolicyPermits(t *testing.T) {
	p := fleet.ImagePolicy{
		Allow:   []string{"ghcr.io/acme", "golang", "python:3.12", "127.0.0.1:5000", "registry.example.com"},
		Default: "debian:12",
	}
	if err := p.Validate("policy.images"); err != nil {
		t.Fatal(err)
	}
	for ref, want := range map[string]bool{
		"ghcr.io/acme/app:1":                          true,
		"ghcr.io/acme/team/app@" + digest:             true,
		"ghcr.io/acme-evil/app:1":                     false, // a prefix on whole components only
		"ghcr.io/other/app:1":                         false,
		"golang:1.22":                                 true,
		"docker.io/library/golang:1.23":               true, // the same repository, written in full
		"index.docker.io/library/golang@" + digest:    true,
		"golang-evil:1":                               false,
		"python:3.12":                                 true,
		"python:3.13":                                 false, // a pinned tag allows that tag only
		"127.0.0.1:5000/any/thing:x":                  true,
		"127.0.0.1:5001/any/thing:x":                  false,
		"registry.example.com/x:1":                    true,
		"registry.example.com.evil.net/x:1":           false,
		"debian:12":                                   true, // the default
		"debian:13":                                   false,
		"not a reference":                             false,
		"ghcr.io/acme/app@sha256:0123":                false,
		"ghcr.io/acme/App:1":                          false, // not a valid reference
		"localhost:5000/ghcr.io/acme/app:1":           false,
		"ghcr.io/acme/app:1@" + digest + "@" + digest: false,
	} {
		if got := p.Permits(ref); got != want {
			t.Errorf("Permits(%q) = %v, want %v", ref, got, want)
		}
	}
}

func TestImagePolicyRefusesBadEntries(t *testing.T) {
	for _, p := range []fleet.ImagePolicy{
		{Allow: []string{""}},
		{Allow: []string{"UPPER/case"}},
		{Allow: []string{"https://ghcr.io/acme"}},
		{Default: "not a reference"},
	} {
		if err := p.Validate("policy.images"); err == nil || !strings.Contains(err.Error(), "policy.images.") {
			t.Errorf("%+v: err %v, want one naming the bad key", p, err)
		}
	}
}

func TestSpecImageIsCheckedAgainstThePolicy(t *testing.T) {
	p := fleet.Policy{Images: fleet.ImagePolicy{Allow: []string{"ghcr.io/acme"}, Default: "ghcr.io/acme/base:1"}}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	spec := func(image string) fleet.TaskSpec {
		s := fleet.Defaults{Profile: "openai", Policy: p}.Apply(fleet.TaskSpec{Prompt: "p", Environment: fleet.Environment{Image: image}})
		if err := s.Validate(); err != nil {
			t.Fatalf("%q: %v", image, err)
		}
		return s
	}
	if err := p.Check(spec("ghcr.io/acme/app:2")); err != nil {
		t.Errorf("an allowed image: %v", err)
	}
	var fe *fleet.FieldError
	if err := p.Check(spec("docker.io/evil/app:1")); !errors.As(err, &fe) || fe.Field != "spec.environment.image" || !strings.Contains(fe.Reason, "ghcr.io/acme") {
		t.Errorf("an image outside the policy: %v, want a field error on spec.environment.image naming the allowed ones", err)
	}
	if s := spec(""); s.Environment.Image != "ghcr.io/acme/base:1" || p.Check(s) != nil {
		t.Errorf("a spec naming no image got %q (check %v), want the default", s.Environment.Image, p.Check(s))
	}
	none := fleet.Policy{}
	if err := none.Check(spec("ghcr.io/acme/app:2")); !errors.As(err, &fe) || !strings.Contains(fe.Reason, "policy.images.allow") {
		t.Errorf("a policy without images: %v, want a refusal naming policy.images.allow", err)
	}
}

func TestSpecImageFields(t *testing.T) {
	for _, tc := range []struct {
		env   fleet.Environment
		field string
	}{
		{fleet.Environment{Image: "not a ref"}, "spec.environment.image"},
		{fleet.Environment{Image: "http://ghcr.io/acme/app"}, "spec.environment.image"},
		{fleet.Environment{ImageCredentials: "ghcr"}, "spec.environment.image_credentials"},
		{fleet.Environment{Image: "ghcr.io/a/b:1", ImageCredentials: "user:secret"}, "spec.environment.image_credentials"},
		{fleet.Environment{Kind: fleet.EnvSSH, Host: "h", User: "u", KeyRef: "k", WorkingDir: "/w", Image: "ghcr.io/a/b:1"}, "spec.environment.image"},
	} {
		s := fleet.TaskSpec{Prompt: "p", Profile: "openai", Environment: tc.env}.WithDefaults()
		var fe *fleet.FieldError
		if err := s.Validate(); !errors.As(err, &fe) || fe.Field != tc.field {
			t.Errorf("%+v: %v, want a field error on %s", tc.env, err, tc.field)
		}
	}
	ok := fleet.TaskSpec{Prompt: "p", Profile: "openai", Environment: fleet.Environment{Image: "ghcr.io/a/b@" + digest, ImageCredentials: "ghcr"}}.WithDefaults()
	if err := ok.Validate(); err != nil {
		t.Errorf("a valid image and credentials reference: %v", err)
	}
}
