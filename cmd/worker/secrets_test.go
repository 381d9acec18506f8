package main

import (
	"testing"

	"github.com/agentfleet/agentfleet/cmd/internal/cli"
)

// The worker is told the passwords of its own connections, to redact
// them, wherever they were configured: in the URLs or beside them.
func TestKnownSecrets(t *testing.T) {
	got := knownSecrets(runConfig{DatabaseURL: "postgres://fleet:db-password-1@db:5432/fleet?sslmode=verify-full",
		NATS: cli.NATSConfig{URL: "nats://s3cret-nats-token@nats:4222", Password: "nats-password-1", Token: "nats-token-12"}})
	for name, want := range map[string]string{"database_url": "db-password-1", "nats.url": "s3cret-nats-token",
		"nats.password": "nats-password-1", "nats.token": "nats-token-12"} {
		if got[name] != want {
			t.Errorf("%s = %q, want %q", name, got[name], want)
		}
	}
	if got := knownSecrets(runConfig{DatabaseURL: "/var/lib/agentfleet.db"}); got["database_url"] != "" {
		t.Errorf("a SQLite path has no password, got %q", got["database_url"])
	}
}
