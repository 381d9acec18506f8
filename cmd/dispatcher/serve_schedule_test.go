package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/spf13/viper"

	"github.com/agentfleet/agentfleet/cmd/internal/cli"
)

// TestServeConfigScheduleInterval: schedule_interval in the serve config
// file sets how often due schedules and delayed starts are looked for.
func TestServeConfigScheduleInterval(t *testing.T) {
	cfg, err := cli.Load[ServeConfig](viper.New(), writeServeFile(t, "database_url: x.db\ntoken: t\nschedule_interval: 30s\n"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.ScheduleInterval != 30*time.Second {
		t.Fatalf("schedule_interval: %s, want 30s", cfg.ScheduleInterval)
	}
}

// writeServeFile writes body as serve.yaml in a fresh directory and
// returns its path.
func writeServeFile(t *testing.T, body string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "serve.yaml")
	if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}
