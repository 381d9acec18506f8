package fleet

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

// Every session setting refuses bad values with a field error naming the
// field and the bound.
func TestSessionValidate(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		s     Session
		field string // "" = valid
		want  string
	}{
		{"empty", Session{}, "", ""},
		{"all valid", Session{CommandTimeout: Duration(time.Minute), MaxCommandTimeout: Duration(30 * time.Minute),
			ToolOutputChars: map[string]int{"shell": 5000}, ToolOutputLines: map[string]int{"grep": 50},
			LoopDetectionWindow: 5, UserInstructions: "be brief", EnvPolicy: "core-only",
			WebFetch:        &WebFetch{Enabled: true, AllowedHosts: []string{"go.dev"}},
			ProviderOptions: &ProviderOptions{Headers: map[string]string{"X-Title": "ci"}, EchoReasoning: new(false)}}, "", ""},
		{"negative timeout", Session{CommandTimeout: Duration(-time.Second)}, "spec.session.command_timeout", "must be > 0"},
		{"negative max timeout", Session{MaxCommandTimeout: Duration(-time.Second)}, "spec.session.max_command_timeout", "must be > 0"},
		{"timeout above max", Session{CommandTimeout: Duration(time.Hour)}, "spec.session.command_timeout", "more than max_command_timeout 10m0s"},
		{"tiny timeout", Session{CommandTimeout: Duration(time.Millisecond)}, "spec.session.command_timeout", "at least 1s"},
		{"unknown tool", Session{ToolOutputChars: map[string]int{"bash": 10}}, "spec.session.tool_output_chars", `unknown tool "bash"`},
		{"unknown tool lines", Session{ToolOutputLines: map[string]int{"Shell": 10}}, "spec.session.tool_output_lines", `unknown tool "Shell"`},
		{"zero chars", Session{ToolOutputChars: map[string]int{"shell": 0}}, "spec.session.tool_output_chars.shell", "between 1 and 1000000"},
		{"too many lines", Session{ToolOutputLines: map[string]int{"shell": 200_000}}, "spec.session.tool_output_lines.shell", "between 1 and 100000"},
		{"negative window", Session{LoopDetectionWindow: -1}, "spec.session.loop_detection_window", "between 2 and 100"},
		{"window of one", Session{LoopDetectionWindow: 1}, "spec.session.loop_detection_window", "at least 2"},
		{"window with detection off", Session{LoopDetection: new(false), LoopDetectionWindow: 5}, "spec.session.loop_detection_window", "loop_detection is false"},
		{"long instructions", Session{UserInstructions: strings.Repeat("x", MaxUserInstructionsBytes+1)}, "spec.session.user_instructions", "more than 65536"},
		{"bad env policy", Session{EnvPolicy: "all"}, "spec.session.env_policy", `"all" is unknown`},
		{"hosts without enabled", Session{WebFetch: &WebFetch{AllowedHosts: []string{"go.dev"}}}, "spec.session.web_fetch.allowed_hosts", "enabled is false"},
		{"url as host", Session{WebFetch: &WebFetch{Enabled: true, AllowedHosts: []string{"https://go.dev"}}}, "spec.session.web_fetch.allowed_hosts[0]", "not a host name"},
		{"auth header", Session{ProviderOptions: &ProviderOptions{Headers: map[string]string{"authorization": "Bearer x"}}}, "spec.session.provider_options.headers.authorization", "credentials"},
		{"aws header", Session{ProviderOptions: &ProviderOptions{Headers: map[string]string{"X-Amz-Target": "x"}}}, "spec.session.provider_options.headers.X-Amz-Target", "credentials"},
		{"header newline", Session{ProviderOptions: &ProviderOptions{Headers: map[string]string{"X-Title": "a\r\nb"}}}, "spec.session.provider_options.headers.X-Title", "one line"},
		{"bad beta", Session{ProviderOptions: &ProviderOptions{AnthropicBeta: []string{"a b"}}}, "spec.session.provider_options.anthropic_beta", "not a beta name"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := TaskSpec{Prompt: "p", Profile: "openai", Session: c.s}
			checkFieldErr(t, s.Validate(), c.field, c.want)
		})
	}
}

func checkFieldErr(t *testing.T, err error, field, want string) {
	t.Helper()
	if field == "" {
		if err != nil {
			t.Fatalf("unexpected error %v", err)
		}
		return
	}
	var fe *FieldError
	if !errors.As(err, &fe) {
		t.Fatalf("error %v, want a *FieldError on %s", err, field)
	}
	if fe.Field != field || !strings.Contains(fe.Reason, want) {
		t.Fatalf("error %q on %q, want %q on %q", fe.Reason, fe.Field, want, field)
	}
}

// A wrong JSON type in a session setting is a decode error naming the
// field (the API turns it into a 400).
func TestSessionWrongType(t *testing.T) {
	t.Parallel()
	for body, field := range map[string]string{
		`{"command_timeout": true}`:             "command_timeout",
		`{"tool_output_chars": {"shell": "x"}}`: "tool_output_chars",
		`{"loop_detection": "no"}`:              "loop_detection",
		`{"web_fetch": {"allowed_hosts": "x"}}`: "allowed_hosts",
	} {
		var s Session
		err := json.Unmarshal([]byte(body), &s)
		if err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("%s: error %v, want one naming %s", body, err, field)
		}
	}
}

// The operator's policy: defaults are applied within its maxima, and a
// spec above them is refused naming the field and the bound.
func TestPolicy(t *testing.T) {
	t.Parallel()
	p := Policy{MaxTurns: 100, MaxWallTime: time.Hour, MaxCostUSD: 5, MaxCommandTimeout: 20 * time.Minute,
		EnvPolicy: "core-only", WebFetch: true, WebFetchHosts: []string{"example.org"}}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	l := p.ApplyLimits(Limits{}, DefaultLimits)
	if l.MaxTurns != 100 || l.WallTime != Duration(time.Hour) || l.MaxCostUSD != 5 || l.MaxTokens != DefaultLimits.MaxTokens {
		t.Fatalf("applied limits %+v: want the maxima where the default is above or unbounded, else the default", l)
	}
	if l := p.ApplyLimits(Limits{MaxTurns: 10}, DefaultLimits); l.MaxTurns != 10 {
		t.Fatalf("a lower spec limit was not kept: %+v", l)
	}
	cases := []struct {
		name  string
		edit  func(*TaskSpec)
		field string
		want  string
	}{
		{"within", func(*TaskSpec) {}, "", ""},
		{"turns above", func(s *TaskSpec) { s.Limits.MaxTurns = 101 }, "spec.limits.max_turns", "above the operator's maximum of 100"},
		{"wall above", func(s *TaskSpec) { s.Limits.WallTime = Duration(2 * time.Hour) }, "spec.limits.wall_time", "maximum of 1h0m0s"},
		{"cost above", func(s *TaskSpec) { s.Limits.MaxCostUSD = 6 }, "spec.limits.max_cost_usd", "maximum of 5"},
		{"raised timeout within", func(s *TaskSpec) { s.Session.MaxCommandTimeout = Duration(15 * time.Minute) }, "", ""},
		{"timeout above", func(s *TaskSpec) { s.Session.MaxCommandTimeout = Duration(30 * time.Minute) }, "spec.session.max_command_timeout", "maximum of 20m0s"},
		{"env wider", func(s *TaskSpec) { s.Session.EnvPolicy = "inherit-all" }, "spec.session.env_policy", "wider than the operator allows (core-only)"},
		{"env narrower", func(s *TaskSpec) { s.Session.EnvPolicy = "none" }, "", ""},
		{"host inside", func(s *TaskSpec) {
			s.Session.WebFetch = &WebFetch{Enabled: true, AllowedHosts: []string{"docs.example.org"}}
		}, "", ""},
		{"host outside", func(s *TaskSpec) {
			s.Session.WebFetch = &WebFetch{Enabled: true, AllowedHosts: []string{"example.com"}}
		}, "spec.session.web_fetch.allowed_hosts[0]", "outside the operator's allowed hosts (example.org)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := TaskSpec{Prompt: "p", Profile: "openai", Limits: l}
			c.edit(&s)
			checkFieldErr(t, p.Check(s), c.field, c.want)
		})
	}
	off := Policy{}
	s := TaskSpec{Prompt: "p", Profile: "openai", Session: Session{WebFetch: &WebFetch{Enabled: true}}}
	checkFieldErr(t, off.Check(s), "spec.session.web_fetch.enabled", "not allowed by the operator")
}
