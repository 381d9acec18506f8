package main

import (
	"testing"
	"time"

	"github.com/spf13/viper"

	"github.com/agentfleet/agentfleet/cmd/internal/cli"
)

// TestServeConfigGitStoreKeep: git_store.keep_after_end comes from the
// file, the environment overrides it, and unset it stays zero (the
// store's default, dispatcher.DefaultGitStoreKeep, applies).
func TestServeConfigGitStoreKeep(t *testing.T) {
	file := writeServeFile(t, "token: t\ndatabase_url: x.db\ngit_store: {dir: /var/lib/agentfleet/gitstore, keep_after_end: 72h}\n")
	cfg, err := cli.Load[ServeConfig](viper.New(), file)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.GitStore.KeepAfterEnd != 72*time.Hour || cfg.GitStore.Dir != "/var/lib/agentfleet/gitstore" {
		t.Fatalf("git_store from the file: %+v", cfg.GitStore)
	}
	t.Setenv("AGENTFLEET_GIT_STORE_KEEP_AFTER_END", "-1s")
	if cfg, err = cli.Load[ServeConfig](viper.New(), file); err != nil || cfg.GitStore.KeepAfterEnd != -time.Second {
		t.Fatalf("git_store.keep_after_end from the environment: %v (%v)", cfg.GitStore.KeepAfterEnd, err)
	}
	t.Setenv("AGENTFLEET_TOKEN", "t")
	t.Setenv("AGENTFLEET_DATABASE_URL", "x.db")
	if cfg, err = cli.Load[ServeConfig](viper.New(), ""); err != nil || cfg.GitStore.KeepAfterEnd != -time.Second {
		t.Fatalf("git_store.keep_after_end from the environment alone: %v (%v)", cfg.GitStore.KeepAfterEnd, err)
	}
}
