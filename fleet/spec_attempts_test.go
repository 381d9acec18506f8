package fleet_test

import (
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/fleet"
)

// TestAttemptsValidation: the best-of-N fields are refused with a reason
// naming the field when they cannot work.
func TestAttemptsValidation(t *testing.T) {
	base := func() fleet.TaskSpec {
		return fleet.TaskSpec{Prompt: "p", Profile: "anthropic", Environment: fleet.Environment{Repo: "/tmp/r"}}.WithDefaults()
	}
	cases := []struct {
		name, want string
		edit       func(*fleet.TaskSpec)
	}{
		{"ok", "", func(s *fleet.TaskSpec) {
			s.Attempts, s.AttemptModels, s.AttemptPick = 3, []string{"a", "b"}, fleet.AttemptPickCheapest
		}},
		{"too many", "attempts must be between 1 and 8", func(s *fleet.TaskSpec) { s.Attempts = 9 }},
		{"models without attempts", "attempt_models and attempt_pick need attempts of 2 or more", func(s *fleet.TaskSpec) { s.AttemptModels = []string{"a"} }},
		{"more models than attempts", "attempt_models lists 3 models for 2 attempts", func(s *fleet.TaskSpec) { s.Attempts, s.AttemptModels = 2, []string{"a", "b", "c"} }},
		{"empty model", "attempt_models [1] must be a model name", func(s *fleet.TaskSpec) { s.Attempts, s.AttemptModels = 2, []string{"a", " "} }},
		{"unknown pick", `attempt_pick "best" is unknown`, func(s *fleet.TaskSpec) { s.Attempts, s.AttemptPick = 2, "best" }},
		{"shared dir", "needs a fresh workspace per attempt", func(s *fleet.TaskSpec) {
			s.Attempts, s.Environment = 2, fleet.Environment{Kind: fleet.EnvLocal, WorkingDir: "/srv/x"}
		}},
		{"attempt by hand", "attempt is set by the system", func(s *fleet.TaskSpec) { s.Attempt = 1 }},
	}
	for _, c := range cases {
		s := base()
		c.edit(&s)
		err := s.Validate()
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

// TestAttemptSpec: an attempt is the task's spec with its model, its
// number and no delivery, at the task's depth; the models repeat.
func TestAttemptSpec(t *testing.T) {
	s := fleet.TaskSpec{Prompt: "p", Model: "m", Depth: 1, Delivery: &fleet.Delivery{}, IdempotencyKey: "k",
		BestOfN: fleet.BestOfN{Attempts: 3, AttemptModels: []string{"a", "b"}}}
	parent, root := uuid.New(), uuid.New()
	for i, want := range []string{"a", "b", "a"} {
		a := s.AttemptSpec(parent, root, i+1)
		if a.Model != want || a.Attempt != i+1 || a.Coordinates() || a.Delivery != nil || a.IdempotencyKey != "" ||
			a.ParentID != parent || a.RootID != root || a.Depth != 1 || a.Prompt != "p" {
			t.Errorf("attempt %d: %+v", i+1, a)
		}
	}
	if !s.Coordinates() || s.Pick() != fleet.AttemptPickFirst {
		t.Errorf("coordinates %v, pick %q", s.Coordinates(), s.Pick())
	}
	if got := fleet.AttemptKey(parent, 12); got != "attempt:"+parent.String()+":12" {
		t.Errorf("key %q", got)
	}
}
