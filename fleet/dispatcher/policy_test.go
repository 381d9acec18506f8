package dispatcher

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/api"
)

// The operator's policy: a spec silent on a limit gets the default within
// the maximum, a spec may lower it, and a spec above a maximum (or asking
// for a session setting beyond the policy) is a 400 naming the field and
// the bound.
func TestOperatorPolicyAppliedAndBounded(t *testing.T) {
	b := setupAPIWith(t, sqliteStore, func(c *Config) {
		c.DefaultLimits = fleet.Limits{MaxTurns: 50, WallTime: fleet.Duration(time.Hour)}
		c.Policy = fleet.Policy{MaxTurns: 80, MaxWallTime: 30 * time.Minute, MaxCostUSD: 3,
			MaxCommandTimeout: 20 * time.Minute, EnvPolicy: "core-only"}
	})
	ctx := context.Background()
	lower := validSpec("lower")
	lower.Limits.MaxTurns = 10
	raised := validSpec("raised")
	raised.Limits.MaxTurns = 80
	raised.Session.MaxCommandTimeout = fleet.Duration(20 * time.Minute)
	for _, tt := range []struct {
		spec fleet.TaskSpec
		want fleet.Limits
	}{
		{validSpec("silent"), fleet.Limits{MaxTurns: 50, WallTime: fleet.Duration(30 * time.Minute), MaxCostUSD: 3}},
		{lower, fleet.Limits{MaxTurns: 10, WallTime: fleet.Duration(30 * time.Minute), MaxCostUSD: 3}},
		{raised, fleet.Limits{MaxTurns: 80, WallTime: fleet.Duration(30 * time.Minute), MaxCostUSD: 3}},
	} {
		got, err := b.client.Submit(ctx, tt.spec)
		if err != nil {
			t.Fatalf("%q: %v", tt.spec.Prompt, err)
		}
		view, err := b.client.Get(ctx, got.Task.ID)
		if err != nil {
			t.Fatal(err)
		}
		var stored fleet.TaskSpec
		if err := json.Unmarshal(view.Spec, &stored); err != nil || stored.Limits != tt.want {
			t.Fatalf("%q stored limits %+v (%v), want %+v", tt.spec.Prompt, stored.Limits, err, tt.want)
		}
	}
	for _, c := range []struct {
		name, body, field, msg string
	}{
		{"turns above", `{"prompt":"p","limits":{"max_turns":81}}`, "spec.limits.max_turns", "above the operator's maximum of 80"},
		{"wall above", `{"prompt":"p","limits":{"wall_time":"2h"}}`, "spec.limits.wall_time", "maximum of 30m0s"},
		{"timeout above", `{"prompt":"p","session":{"max_command_timeout":"1h"}}`, "spec.session.max_command_timeout", "maximum of 20m0s"},
		{"env wider", `{"prompt":"p","session":{"env_policy":"inherit-all"}}`, "spec.session.env_policy", "wider than the operator allows"},
		{"web_fetch off", `{"prompt":"p","session":{"web_fetch":{"enabled":true}}}`, "spec.session.web_fetch.enabled", "not allowed by the operator"},
		{"unknown tool", `{"prompt":"p","session":{"tool_output_chars":{"bash":10}}}`, "spec.session.tool_output_chars", `unknown tool "bash"`},
		{"negative", `{"prompt":"p","session":{"loop_detection_window":-1}}`, "spec.session.loop_detection_window", "between 2 and 100"},
		{"wrong type", `{"prompt":"p","session":{"command_timeout":true}}`, "spec.session.command_timeout", "must be a JSON string"},
		{"wrong type bool", `{"prompt":"p","session":{"loop_detection":"off"}}`, "spec.session.loop_detection", "must be a JSON boolean"},
	} {
		code, detail, raw := b.rawCall(t, http.MethodPost, "/v1/tasks", c.body, testToken)
		if code != http.StatusBadRequest || detail.Code != api.CodeInvalid || detail.Field != c.field || !strings.Contains(detail.Message, c.msg) {
			t.Errorf("%s: %d %s, want 400 with field %q and a message containing %q", c.name, code, raw, c.field, c.msg)
		}
	}
}

// TestWorkingDirAndRepoRefusedAtSubmission: a spec naming a host
// directory, shared without shared roots, or a repository the policy does
// not admit is a 400 naming the field (issue 27 items 2 and 4).
func TestWorkingDirAndRepoRefusedAtSubmission(t *testing.T) {
	b := setupAPIWith(t, sqliteStore, func(c *Config) {
		c.Policy = fleet.Policy{Repositories: fleet.Repositories{Allow: []string{"github.com/acme/"}}}
	})
	for _, c := range []struct {
		name, body, field, msg string
	}{
		{"host dir", `{"prompt":"p","environment":{"kind":"local","working_dir":"/any/host/dir"}}`, "spec.environment.working_dir", "no policy.shared_roots"},
		{"shared", `{"prompt":"p","environment":{"kind":"local","working_dir":"/any/host/dir","shared":true}}`, "spec.environment.shared", "policy.shared_roots"},
		{"look-alike", `{"prompt":"p","environment":{"repo":"https://github.com.evil.net/x"}}`, "spec.environment.repo", "policy.repositories.allow"},
		{"local", `{"prompt":"p","environment":{"repo":"/srv/git/app"}}`, "spec.environment.repo", "no local paths"},
		{"ext", `{"prompt":"p","environment":{"repo":"ext::sh -c touch% /tmp/x"}}`, "spec.environment.repo", "remote helper"},
	} {
		code, detail, raw := b.rawCall(t, http.MethodPost, "/v1/tasks", c.body, testToken)
		if code != http.StatusBadRequest || detail.Code != api.CodeInvalid || detail.Field != c.field || !strings.Contains(detail.Message, c.msg) {
			t.Errorf("%s: %d %s, want 400 with field %q and a message containing %q", c.name, code, raw, c.field, c.msg)
		}
	}
	if _, err := b.client.Submit(context.Background(), fleet.TaskSpec{Prompt: "p",
		Environment: fleet.Environment{Repo: "https://github.com/acme/app.git"}}); err != nil {
		t.Fatalf("an allowed repository was refused: %v", err)
	}
}
