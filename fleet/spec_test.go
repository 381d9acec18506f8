package fleet

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
)

func TestTaskSpecValidate(t *testing.T) {
	t.Parallel()
	ok := func() TaskSpec { return TaskSpec{Prompt: "fix the test", Profile: "openai"} }
	cases := []struct {
		name  string
		edit  func(*TaskSpec)
		field string // "" = valid
		want  string
	}{
		{"minimal", func(*TaskSpec) {}, "", ""},
		{"no prompt", func(s *TaskSpec) { s.Prompt = "  " }, "spec.prompt", "is required"},
		{"no profile", func(s *TaskSpec) { s.Profile = "" }, "spec.profile", "is required"},
		{"unknown profile", func(s *TaskSpec) { s.Profile = "cohere" }, "spec.profile", `"cohere" is unknown`},
		{"bad effort", func(s *TaskSpec) { s.ReasoningEffort = "max" }, "spec.reasoning_effort", `"max" is unknown`},
		{"negative turns", func(s *TaskSpec) { s.Limits.MaxTurns = -1 }, "spec.limits.max_turns", "must be >= 0, got -1"},
		{"negative rounds", func(s *TaskSpec) { s.Limits.MaxToolRounds = -2 }, "spec.limits.max_tool_rounds", "got -2"},
		{"negative wall", func(s *TaskSpec) { s.Limits.WallTime = Duration(-time.Second) }, "spec.limits.wall_time", "got -1s"},
		{"negative tokens", func(s *TaskSpec) { s.Limits.MaxTokens = -5 }, "spec.limits.max_tokens", "got -5"},
		{"negative cost", func(s *TaskSpec) { s.Limits.MaxCostUSD = -0.5 }, "spec.limits.max_cost_usd", "got -0.5"},
		{"ssh ok", func(s *TaskSpec) {
			s.Environment = Environment{Kind: EnvSSH, Host: "build1", User: "ci", KeyRef: "ci-key", WorkingDir: "/srv/repo"}
		}, "", ""},
		{"ssh without key", func(s *TaskSpec) {
			s.Environment = Environment{Kind: EnvSSH, Host: "build1", User: "ci", WorkingDir: "/srv/repo"}
		}, "spec.environment.key_ref", "is required"},
		{"ssh relative dir", func(s *TaskSpec) {
			s.Environment = Environment{Kind: EnvSSH, Host: "h", User: "u", KeyRef: "k", WorkingDir: "repo"}
		}, "spec.environment.working_dir", "absolute"},
		{"ssh private key", func(s *TaskSpec) {
			s.Environment = Environment{Kind: EnvSSH, Host: "h", User: "u", KeyRef: "-----BEGIN OPENSSH PRIVATE KEY-----", WorkingDir: "/r"}
		}, "spec.environment.key_ref", "private key"},
		{"bad kind", func(s *TaskSpec) { s.Environment.Kind = "docker" }, "spec.environment.kind", `"docker" is unknown`},
		{"ref without repo", func(s *TaskSpec) { s.Environment.Ref = "main" }, "spec.environment.ref", "needs environment.repo"},
		{"repo password", func(s *TaskSpec) { s.Environment.Repo = "https://u:p@example.com/r.git" }, "spec.environment.repo", "secrets"},
		{"local with host", func(s *TaskSpec) { s.Environment.Host = "h" }, "spec.environment.host", "are for kind"},
		{"depth limit", func(s *TaskSpec) { s.MaxSubagentDepth = new(-1) }, "spec.max_subagent_depth", "got -1"},
		{"no subagents", func(s *TaskSpec) { s.MaxSubagentDepth = new(0) }, "", ""},
		{"live children", func(s *TaskSpec) { s.MaxLiveChildren = -1 }, "spec.max_live_children", "got -1"},
		{"child policy", func(s *TaskSpec) { s.ChildPolicy = "orphan" }, "spec.child_policy", `"orphan"`},
		{"queue chars", func(s *TaskSpec) { s.Queue = "a.b" }, "spec.queue", "letters, digits"},
		{"queue reserved", func(s *TaskSpec) { s.Queue = "worker" }, "spec.queue", "reserved"},
		{"priority", func(s *TaskSpec) { s.Priority = 5000 }, "spec.priority", "got 5000"},
		{"label key", func(s *TaskSpec) { s.Labels = map[string]string{"": "x"} }, "spec.labels", "key"},
		{"long key", func(s *TaskSpec) { s.IdempotencyKey = strings.Repeat("k", 300) }, "spec.idempotency_key", "300 bytes"},
		{"depth without parent", func(s *TaskSpec) { s.Depth = 1 }, "spec.parent_id", "depth 1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := ok()
			c.edit(&s)
			err := s.Validate()
			if c.field == "" {
				if err != nil {
					t.Fatalf("Validate: %v, want nil", err)
				}
				return
			}
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("Validate: %v, want a *FieldError", err)
			}
			if fe.Field != c.field || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Validate: field %q error %q, want field %q containing %q", fe.Field, err, c.field, c.want)
			}
		})
	}
}

func TestTaskSpecValidateAllowed(t *testing.T) {
	t.Parallel()
	s := TaskSpec{Prompt: "p", Profile: "gemini"}
	if err := s.Validate("openai"); err == nil || !strings.Contains(err.Error(), "want one of openai") {
		t.Fatalf("Validate(openai) = %v, want unknown profile", err)
	}
	if err := s.Validate("gemini"); err != nil {
		t.Fatalf("Validate(gemini) = %v", err)
	}
}

func TestTaskSpecErrorMessage(t *testing.T) {
	t.Parallel()
	err := TaskSpec{Prompt: "p", Profile: "openai", Limits: Limits{MaxTurns: -1}}.Validate()
	if got, want := err.Error(), "spec.limits.max_turns must be >= 0, got -1"; got != want {
		t.Fatalf("error %q, want %q", got, want)
	}
	var fe *FieldError
	errors.As(err, &fe)
	if got, want := fe.WithPrefix("tasks[3]").Error(), "tasks[3].limits.max_turns must be >= 0, got -1"; got != want {
		t.Fatalf("prefixed %q, want %q", got, want)
	}
}

func TestTaskSpecSubmission(t *testing.T) {
	t.Parallel()
	s := TaskSpec{Prompt: "p", Profile: "openai", ParentID: uuid.New(), Depth: 1}
	if err := s.Validate(); err != nil {
		t.Fatalf("Validate of a child spec: %v", err)
	}
	if err := s.ValidateSubmission(); err == nil || !strings.Contains(err.Error(), "spec.parent_id is set by the system") {
		t.Fatalf("ValidateSubmission = %v, want parent_id refused", err)
	}
}

func TestTaskSpecDefaultsAndJSON(t *testing.T) {
	t.Parallel()
	var s TaskSpec
	in := `{"prompt":"p","profile":"anthropic","limits":{"wall_time":"90s","max_turns":3},"max_subagent_depth":0}`
	if err := json.Unmarshal([]byte(in), &s); err != nil {
		t.Fatal(err)
	}
	if time.Duration(s.Limits.WallTime) != 90*time.Second || s.SubagentDepthLimit() != 0 {
		t.Fatalf("decoded %+v", s)
	}
	d := s.WithDefaults()
	if d.Queue != DefaultQueue || d.ChildPolicy != ChildCancel || d.MaxLiveChildren != 0 ||
		d.SubagentDepthLimit() != 0 || d.Environment.Kind != EnvLocal {
		t.Fatalf("WithDefaults = %+v", d)
	}
	if (TaskSpec{}).WithDefaults().SubagentDepthLimit() != DefaultSubagentDepth {
		t.Fatal("default subagent depth is not 1")
	}
	out, err := json.Marshal(TaskSpec{Prompt: "p", Profile: "openai"})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(out); got != `{"prompt":"p","profile":"openai"}` {
		t.Fatalf("minimal spec marshals to %s", got)
	}
	if err := json.Unmarshal([]byte(`{"limits":{"wall_time":30}}`), &s); err != nil || time.Duration(s.Limits.WallTime) != 30*time.Second {
		t.Fatalf("seconds form: %v %v", err, s.Limits.WallTime)
	}
	if err := json.Unmarshal([]byte(`{"limits":{"wall_time":"soon"}}`), &s); err == nil {
		t.Fatal("bad duration accepted")
	}
}
