package fleet

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
)

func outcomeSpec() TaskSpec {
	return TaskSpec{Prompt: "fix it", Profile: "anthropic", Environment: Environment{Repo: "https://forge.example/o/r.git"}}
}

// TestChecksAndDeliveryJSON: checks sit at the spec's top level, delivery
// under its own key.
func TestChecksAndDeliveryJSON(t *testing.T) {
	raw := `{"prompt":"p","profile":"anthropic","environment":{"repo":"https://forge.example/o/r.git"},
	  "checks":[{"name":"test","command":"go test ./...","timeout":"5m"}],"max_repair_rounds":1,"checks_before":true,
	  "delivery":{"branch":"fix/{short_id}","credentials":{"token":"gh"},"pull_request":{"labels":["bot"],"draft":true}}}`
	var s TaskSpec
	if err := json.Unmarshal([]byte(raw), &s); err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	if len(s.Checks) != 1 || s.Checks[0].TimeoutOrDefault() != 5*time.Minute || s.RepairRounds() != 1 || !s.ChecksBefore {
		t.Errorf("checks %+v", s.Verification)
	}
	id := uuid.MustParse("0190f5a3-1111-7000-8000-000000000000")
	if got := s.Delivery.BranchName(id); got != "fix/0190f5a3" {
		t.Errorf("branch %q", got)
	}
	if got := (Delivery{}).BranchName(id); got != "agentfleet/"+id.String() {
		t.Errorf("default branch %q", got)
	}
	if (Verification{}).RepairRounds() != DefaultRepairRounds {
		t.Error("default repair rounds")
	}
}

// TestChecksAndDeliveryRefused: bad checks and deliveries are refused,
// naming the field.
func TestChecksAndDeliveryRefused(t *testing.T) {
	neg, many := -1, MaxRepairRoundsLimit+1
	cases := []struct {
		name  string
		edit  func(*TaskSpec)
		field string
	}{
		{"empty check name", func(s *TaskSpec) { s.Checks = []Check{{Command: "true"}} }, "spec.checks[0].name"},
		{"no command", func(s *TaskSpec) { s.Checks = []Check{{Name: "a"}} }, "spec.checks[0].command"},
		{"duplicate", func(s *TaskSpec) { s.Checks = []Check{{Name: "a", Command: "x"}, {Name: "a", Command: "y"}} }, "spec.checks[1].name"},
		{"negative timeout", func(s *TaskSpec) { s.Checks = []Check{{Name: "a", Command: "x", Timeout: -1}} }, "spec.checks[0].timeout"},
		{"rounds < 0", func(s *TaskSpec) { s.Checks = []Check{{Name: "a", Command: "x"}}; s.MaxRepairRounds = &neg }, "spec.max_repair_rounds"},
		{"rounds too many", func(s *TaskSpec) { s.Checks = []Check{{Name: "a", Command: "x"}}; s.MaxRepairRounds = &many }, "spec.max_repair_rounds"},
		{"before without checks", func(s *TaskSpec) { s.ChecksBefore = true }, "spec.checks"},
		{"delivery without repository", func(s *TaskSpec) { s.Environment.Repo = ""; s.Delivery = &Delivery{} }, "spec.environment.repo"},
		{"delivery over ssh", func(s *TaskSpec) {
			s.Environment = Environment{Kind: EnvSSH, Host: "h", User: "u", KeyRef: "k", WorkingDir: "/w"}
			s.Delivery = &Delivery{}
		}, "spec.delivery"},
		{"branch with space", func(s *TaskSpec) { s.Delivery = &Delivery{Branch: "fix it/{task_id}"} }, "spec.delivery.branch"},
		{"branch with ..", func(s *TaskSpec) { s.Delivery = &Delivery{Branch: "a..b"} }, "spec.delivery.branch"},
		{"branch ending .lock", func(s *TaskSpec) { s.Delivery = &Delivery{Branch: "x/{short_id}.lock"} }, "spec.delivery.branch"},
		{"branch with ~", func(s *TaskSpec) { s.Delivery = &Delivery{Branch: "x~1"} }, "spec.delivery.branch"},
		{"bad base", func(s *TaskSpec) { s.Delivery = &Delivery{Base: "main:x"} }, "spec.delivery.base"},
		{"remote with password", func(s *TaskSpec) { s.Delivery = &Delivery{Remote: "https://u:p@h/r.git"} }, "spec.delivery.remote"},
		{"remote not a URL", func(s *TaskSpec) { s.Delivery = &Delivery{Remote: "origin"} }, "spec.delivery.remote"},
		{"bad author", func(s *TaskSpec) { s.Delivery = &Delivery{Author: "nobody"} }, "spec.delivery.author"},
		{"secret as reference", func(s *TaskSpec) {
			s.Delivery = &Delivery{Credentials: DeliveryCredentials{SSHKey: "-----BEGIN OPENSSH PRIVATE KEY-----"}}
		}, "spec.delivery.credentials.ssh_key"},
		{"request without token", func(s *TaskSpec) { s.Delivery = &Delivery{PullRequest: &PullRequest{}} }, "spec.delivery.credentials.token"},
		{"request repo", func(s *TaskSpec) {
			s.Delivery = &Delivery{Credentials: DeliveryCredentials{Token: "t"}, PullRequest: &PullRequest{Repo: "noslash"}}
		}, "spec.delivery.pull_request.repo"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := outcomeSpec()
			tc.edit(&s)
			var fe *FieldError
			if err := s.Validate(); !errors.As(err, &fe) || fe.Field != tc.field {
				t.Fatalf("Validate = %v, want a FieldError on %s", err, tc.field)
			} else if !strings.Contains(fe.Error(), tc.field) {
				t.Fatalf("error %q does not name %s", fe, tc.field)
			}
		})
	}
}

func TestValidRefName(t *testing.T) {
	for name, want := range map[string]bool{
		"refs/heads/agentfleet/x": true, "refs/heads/a.b-c_d": true,
		"refs/heads/a b": false, "refs/heads/.a": false, "refs/heads/a/": false, "refs/heads/a@{1}": false,
		"refs/heads/a//b": false, "refs/heads/a*": false, "refs/heads/a\x01": false,
	} {
		if got := ValidRefName(name); got != want {
			t.Errorf("ValidRefName(%q) = %v, want %v", name, got, want)
		}
	}
}
