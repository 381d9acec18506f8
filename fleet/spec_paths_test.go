package fleet

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/uuid"
)

// TestWorkingDirAndRepoPolicy: a submission's working_dir must lie under
// a shared root, shared needs shared roots, and environment.repo must be
// a transport and place the operator allows; each refusal names its
// field.
func TestWorkingDirAndRepoPolicy(t *testing.T) {
	t.Parallel()
	none := Policy{}
	shared := Policy{SharedRoots: []string{"/srv/shared"}}
	repos := Policy{Repositories: Repositories{Allow: []string{"github.com/acme/"}, AllowLocal: []string{"/srv/git"}}}
	child := uuid.New()
	cases := []struct {
		name   string
		policy Policy
		env    Environment
		parent uuid.UUID
		field  string // "" = allowed
	}{
		{"fresh workspace", none, Environment{}, uuid.Nil, ""},
		{"any host dir, no roots", none, Environment{WorkingDir: "/any/host/dir"}, uuid.Nil, "spec.environment.working_dir"},
		{"shared, no roots", none, Environment{WorkingDir: "/any/host/dir", Shared: true}, uuid.Nil, "spec.environment.shared"},
		{"under a root", shared, Environment{WorkingDir: "/srv/shared/team/x", Shared: true}, uuid.Nil, ""},
		{"the root itself", shared, Environment{WorkingDir: "/srv/shared"}, uuid.Nil, ""},
		{"outside the roots", shared, Environment{WorkingDir: "/etc", Shared: true}, uuid.Nil, "spec.environment.working_dir"},
		{"prefix but not under", shared, Environment{WorkingDir: "/srv/sharedevil/x"}, uuid.Nil, "spec.environment.working_dir"},
		{"dot-dot out of a root", shared, Environment{WorkingDir: "/srv/shared/../../etc"}, uuid.Nil, "spec.environment.working_dir"},
		{"child in its parent's workspace", none, Environment{WorkingDir: "/tmp/ws/parent/sub"}, child, ""},
		{"shared child outside the roots", shared, Environment{WorkingDir: "/etc", Shared: true}, child, "spec.environment.working_dir"},
		{"any public https", none, Environment{Repo: "https://example.com/o/r.git"}, uuid.Nil, ""},
		{"local path by default", none, Environment{Repo: "/srv/git/app"}, uuid.Nil, "spec.environment.repo"},
		{"allowed host", repos, Environment{Repo: "https://github.com/acme/app"}, uuid.Nil, ""},
		{"plain http", none, Environment{Repo: "http://example.com/o/r.git"}, uuid.Nil, "spec.environment.repo"},
		{"look-alike host", repos, Environment{Repo: "https://github.com.evil.net/x"}, uuid.Nil, "spec.environment.repo"},
		{"allowed local", repos, Environment{Repo: "/srv/git/app"}, uuid.Nil, ""},
		{"other local", repos, Environment{Repo: "/home/other/app"}, uuid.Nil, "spec.environment.repo"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := TaskSpec{Prompt: "p", Profile: "anthropic", Environment: c.env, ParentID: c.parent}
			if c.parent != uuid.Nil {
				s.Depth, s.RootID = 1, c.parent
			}
			err := s.Validate()
			if err == nil {
				err = c.policy.Check(s)
			}
			var fe *FieldError
			switch {
			case c.field == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.field != "" && (!errors.As(err, &fe) || fe.Field != c.field):
				t.Fatalf("got %v, want a refusal naming %s", err, c.field)
			}
		})
	}
}

// TestRepoTransportsRefused: transports no policy admits are refused by
// Validate alone, naming environment.repo.
func TestRepoTransportsRefused(t *testing.T) {
	t.Parallel()
	for _, repo := range []string{"ext::sh -c touch% /tmp/x", "fd::3", "git://h/x", "relative/x", "https://user@h/x"} {
		s := TaskSpec{Prompt: "p", Profile: "anthropic", Environment: Environment{Repo: repo}}
		var fe *FieldError
		if err := s.Validate(); !errors.As(err, &fe) || fe.Field != "spec.environment.repo" {
			t.Errorf("repo %q: %v, want a refusal naming spec.environment.repo", repo, err)
		}
	}
	s := TaskSpec{Prompt: "p", Profile: "anthropic", Environment: Environment{WorkingDir: "rel"}}
	if err := s.Validate(); err == nil || !strings.Contains(err.Error(), "environment.working_dir") {
		t.Errorf("relative working_dir: %v", err)
	}
}

func TestPolicyValidatesPaths(t *testing.T) {
	t.Parallel()
	for _, p := range []Policy{
		{SharedRoots: []string{"relative"}},
		{SharedRoots: []string{"/"}},
		{Repositories: Repositories{Allow: []string{"ftp://h/x"}}},
		{Repositories: Repositories{AllowLocal: []string{"rel"}}},
		{Repositories: Repositories{AllowPrivate: []string{"not-an-address"}}},
	} {
		if err := p.Validate(); err == nil {
			t.Errorf("%+v validated", p)
		}
	}
}
