package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/viper"
)

func TestRunConfigFromFileEnvAndFlags(t *testing.T) {
	file := filepath.Join(t.TempDir(), "w.yaml")
	if err := os.WriteFile(file, []byte("worker:\n  sessions: 3\n  queues: [a, b]\n  drain_grace: 2s\nstore:\n  dsn: from-file.db\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AGENTFLEET_STORE_DSN", "postgres://from-env/db")
	t.Setenv("AGENTFLEET_WORKER_ID", "env-worker")
	cfg, err := loadRunConfig(viper.New(), file)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Store.DSN != "postgres://from-env/db" || cfg.Worker.ID != "env-worker" || cfg.Worker.Sessions != 3 ||
		strings.Join(cfg.Worker.Queues, ",") != "a,b" || cfg.Worker.DrainGrace != 2*time.Second {
		t.Fatalf("config %+v", cfg)
	}
}

func TestRunConfigErrorsNameTheField(t *testing.T) {
	t.Setenv("AGENTFLEET_WORKER_SESSIONS", "-2")
	var stderr bytes.Buffer
	code := execute(context.Background(), []string{"run", "--http-addr", "off"}, nil, &bytes.Buffer{}, &stderr)
	if code != 2 {
		t.Fatalf("exit %d, want 2 (bad usage)", code)
	}
	for _, want := range []string{"store.dsn is required", "worker.sessions must be >= 1"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr %q lacks %q", stderr.String(), want)
		}
	}
}
