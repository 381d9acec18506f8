package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/spf13/viper"

	"github.com/agentfleet/agentfleet/cmd/internal/cli"
)

// TestRunRefusesPlaintextNATS: `worker run` with a nats:// server off
// loopback and no TLS exits 2 naming what to set; with
// nats.allow_plaintext the same URL is no error of the configuration.
func TestRunRefusesPlaintextNATS(t *testing.T) {
	t.Setenv("AGENTFLEET_DATABASE_URL", "w.db")
	t.Setenv("AGENTFLEET_NATS_URL", "nats://nats-1.internal:4222")
	var stderr bytes.Buffer
	code := execute(context.Background(), []string{"run", "--listen", "off"}, nil, &bytes.Buffer{}, &stderr)
	if code != 2 || !strings.Contains(stderr.String(), "nats.allow_plaintext: true (AGENTFLEET_NATS_ALLOW_PLAINTEXT)") ||
		!strings.Contains(stderr.String(), "tls://nats-1.internal:4222") {
		t.Fatalf("exit %d, stderr %q; want 2 naming tls:// and nats.allow_plaintext", code, stderr.String())
	}
	t.Setenv("AGENTFLEET_NATS_ALLOW_PLAINTEXT", "true")
	cfg, err := cli.Load[runConfig](viper.New(), "")
	if err != nil {
		t.Fatalf("with nats.allow_plaintext: %v", err)
	}
	if !cfg.NATS.AllowPlaintext {
		t.Fatal("nats.allow_plaintext did not arrive")
	}
}
