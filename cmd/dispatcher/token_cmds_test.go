package main

import (
	"regexp"
	"strings"
	"testing"
)

// TestTokenCommands: create prints the secret once, the new token works,
// list shows it without the secret, revoke makes it refused at once, and
// the audit log shows all of it.
func TestTokenCommands(t *testing.T) {
	startDispatcher(t)
	code, out := run(t, "token", "create", "ci", "--grant", "team-a=submitter", "--expires-in", "24h")
	secret := regexp.MustCompile(`token \(shown once, keep it secret\): (aft_\S+)`).FindStringSubmatch(out)
	if code != 0 || secret == nil || !strings.Contains(out, "team-a=submitter") {
		t.Fatalf("token create: %d %s", code, out)
	}
	id := regexp.MustCompile(`(?m)^([0-9a-f-]{36})\s+ci\s`).FindStringSubmatch(out)
	if id == nil {
		t.Fatalf("token create printed no id: %s", out)
	}
	code, out = run(t, "token", "list")
	if code != 0 || !strings.Contains(out, id[1]) || strings.Contains(out, secret[1]) {
		t.Fatalf("token list: %d %s", code, out)
	}
	t.Setenv(EnvToken, secret[1])
	if code, out := run(t, "whoami"); code != 0 || !strings.Contains(out, "token:"+id[1]) || !strings.Contains(out, "team-a=submitter") {
		t.Fatalf("whoami with the new token: %d %s", code, out)
	}
	if code, out := run(t, "token", "list"); code != 1 || !strings.Contains(out, "403") || !strings.Contains(out, "admin") {
		t.Fatalf("a submitter lists tokens: %d %s", code, out)
	}
	t.Setenv(EnvToken, "tk")
	if code, out := run(t, "token", "revoke", id[1]); code != 0 || !strings.Contains(out, "revoked token "+id[1]) {
		t.Fatalf("token revoke: %d %s", code, out)
	}
	t.Setenv(EnvToken, secret[1])
	if code, out := run(t, "whoami"); code != 1 || !strings.Contains(out, "401") || !strings.Contains(out, "revoked") {
		t.Fatalf("whoami with the revoked token: %d %s", code, out)
	}
	t.Setenv(EnvToken, "tk")
	if code, out := run(t, "token", "create", "x", "--grant", "team-a"); code != 2 || !strings.Contains(out, "TENANT=ROLE") {
		t.Fatalf("a grant without a role: %d %s", code, out)
	}
	code, out = run(t, "audit", "--action", "token.revoke")
	if code != 0 || !strings.Contains(out, "bootstrap") || !strings.Contains(out, id[1]) || !strings.Contains(out, "team-a") {
		t.Fatalf("audit: %d %s", code, out)
	}
}
