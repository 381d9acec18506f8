package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/viper"

	"github.com/agentfleet/agentfleet/cmd/internal/cli"
	"github.com/agentfleet/agentfleet/fleet"
)

// TestServeConfigEveryKeyFromEnv sets top-level and nested keys only
// through AGENTFLEET_* variables: each must arrive, though no file names it.
func TestServeConfigEveryKeyFromEnv(t *testing.T) {
	for k, v := range map[string]string{
		"DATABASE_URL": "postgres://env/db", "PREFIX": "fleet2", "LISTEN": "127.0.0.1:0", "LOG_FORMAT": "text",
		"LOG_LEVEL": "warn", "TOKEN": "tk", "QUEUES": "a,b", "PROFILES": "openai,gemini", "DEFAULT_PROFILE": "gemini",
		"SHUTDOWN_GRACE": "3s", "NATS_URL": "nats://n1:4222,nats://n2:4222", "NATS_USER": "dispatcher", "NATS_PASSWORD": "pw",
		"NATS_REPLICAS": "3", "NATS_ACK_WAIT": "90s", "NATS_MAX_DELIVER": "7", "NATS_ALLOW_PLAINTEXT": "true",
		"BEHIND_TLS_PROXY": "true", "ALLOWED_HOSTS": "fleet.example.com,*.fleet.example.com",
		"POLICY_SHARED_ROOTS": "/srv/shared", "POLICY_REPOSITORIES_ALLOW": "github.com/acme/,gitea.internal/team",
	} {
		t.Setenv("AGENTFLEET_"+k, v)
	}
	cfg, err := cli.Load[ServeConfig](viper.New(), "")
	if err != nil {
		t.Fatal(err)
	}
	q := cfg.NATS.QueueConfig(cfg.Prefix)
	for _, c := range []struct {
		key       string
		got, want any
	}{
		{"database_url", cfg.DatabaseURL, "postgres://env/db"},
		{"prefix", q.Prefix, "fleet2"},
		{"listen", cfg.Listen, "127.0.0.1:0"},
		{"log_format", cfg.LogFormat, "text"},
		{"log_level", cfg.LogLevel, "warn"},
		{"token", cfg.Token, "tk"},
		{"queues", strings.Join(cfg.Queues, ","), "a,b"},
		{"profiles", strings.Join(cfg.Profiles, ","), "openai,gemini"},
		{"default_profile", cfg.DefaultProfile, "gemini"},
		{"shutdown_grace", cfg.ShutdownGrace, 3 * time.Second},
		{"nats.url", cfg.NATS.URL, "nats://n1:4222,nats://n2:4222"},
		{"nats.user", cfg.NATS.User, "dispatcher"},
		{"nats.password", cfg.NATS.Password, "pw"},
		{"nats.replicas", q.Replicas, 3},
		{"nats.ack_wait", q.AckWait, 90 * time.Second},
		{"nats.max_deliver", q.MaxDeliver, 7},
		{"nats.allow_plaintext", cfg.NATS.AllowPlaintext, true},
		{"behind_tls_proxy", cfg.BehindTLSProxy, true},
		{"allowed_hosts", strings.Join(cfg.AllowedHosts, " "), "fleet.example.com *.fleet.example.com"},
		{"policy.shared_roots", strings.Join(cfg.Policy.SharedRoots, " "), "/srv/shared"},
		{"policy.repositories.allow", strings.Join(cfg.Policy.Repositories.Allow, " "), "github.com/acme/ gitea.internal/team"},
	} {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.key, c.got, c.want)
		}
	}
}

func TestServeConfigFileThenEnv(t *testing.T) {
	file := filepath.Join(t.TempDir(), "serve.yaml")
	yaml := "database_url: from-file.db\ntoken: file-token\nnats: {url: \"nats://file:4222\", replicas: 2, allow_plaintext: true}\n"
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AGENTFLEET_NATS_REPLICAS", "3")
	cfg, err := cli.Load[ServeConfig](viper.New(), file)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.DatabaseURL != "from-file.db" || cfg.NATS.URL != "nats://file:4222" || cfg.NATS.Replicas != 3 {
		t.Fatalf("config %+v: want the file's database_url and nats.url, the environment's nats.replicas", cfg)
	}
	if cfg.Listen != "127.0.0.1:8080" || cfg.LogLevel != "info" {
		t.Fatalf("defaults: listen %q, log_level %q", cfg.Listen, cfg.LogLevel)
	}
}

func TestServeConfigRejectsBadReplicas(t *testing.T) {
	t.Setenv("AGENTFLEET_NATS_REPLICAS", "6")
	code, out := run(t, "serve", "--database-url", "x.db", "--token", "t")
	if code != 2 || !strings.Contains(out, "nats.replicas must be between 1 and 5") {
		t.Fatalf("serve with 6 replicas: exit %d, output %q", code, out)
	}
}

// The default limits come from their keys, each unset one from
// fleet.DefaultLimits; no_default_limits drops the built-in ones.
func TestServeConfigDefaultLimits(t *testing.T) {
	t.Setenv("AGENTFLEET_TOKEN", "tk")
	t.Setenv("AGENTFLEET_DATABASE_URL", "d.db")
	t.Setenv("AGENTFLEET_DEFAULT_MAX_TURNS", "50")
	t.Setenv("AGENTFLEET_DEFAULT_MAX_COST_USD", "2.5")
	cfg, err := cli.Load[ServeConfig](viper.New(), "")
	if err != nil {
		t.Fatal(err)
	}
	want := fleet.Limits{MaxTurns: 50, MaxCostUSD: 2.5, WallTime: fleet.DefaultLimits.WallTime, MaxTokens: fleet.DefaultLimits.MaxTokens}
	if got := cfg.defaultLimits(); got != want {
		t.Fatalf("default limits %+v, want %+v", got, want)
	}
	cfg.NoDefaultLimits = true
	if got := cfg.defaultLimits(); got != (fleet.Limits{MaxTurns: 50, MaxCostUSD: 2.5}) {
		t.Fatalf("with no_default_limits: %+v, want only the configured ones", got)
	}
}

// The sandbox bound comes from sandbox_network and sandbox_allow_hosts;
// none is set when neither is, and a bad one is named.
func TestServeConfigSandboxBound(t *testing.T) {
	t.Setenv("AGENTFLEET_TOKEN", "tk")
	t.Setenv("AGENTFLEET_DATABASE_URL", "d.db")
	cfg, err := cli.Load[ServeConfig](viper.New(), "")
	if err != nil || cfg.sandboxBound() != nil {
		t.Fatalf("no keys: bound %+v, %v; want none", cfg.sandboxBound(), err)
	}
	t.Setenv("AGENTFLEET_SANDBOX_ALLOW_HOSTS", "github.com,*.golang.org")
	cfg, err = cli.Load[ServeConfig](viper.New(), "")
	if b := cfg.sandboxBound(); err != nil || b == nil || b.Widest() != fleet.SandboxNetworkAllowlist || len(b.AllowHosts) != 2 {
		t.Fatalf("bound %+v, %v; want an allowlist of 2 hosts", b, err)
	}
	t.Setenv("AGENTFLEET_SANDBOX_NETWORK", "everything")
	if _, err := cli.Load[ServeConfig](viper.New(), ""); err == nil || !strings.Contains(err.Error(), "sandbox_network must be") {
		t.Fatalf("a bad sandbox_network: %v", err)
	}
}

// sandbox_limits is read as the workers' key is, and a bad one is named.
func TestServeConfigSandboxLimits(t *testing.T) {
	t.Setenv("AGENTFLEET_TOKEN", "tk")
	t.Setenv("AGENTFLEET_DATABASE_URL", "d.db")
	v := viper.New()
	v.Set("sandbox_limits", map[string]any{"pids": 512, "memory": "1GiB", "cpu_time": "10m"})
	cfg, err := cli.Load[ServeConfig](v, "")
	if err != nil || cfg.SandboxLimits != (fleet.SandboxLimits{Pids: 512, Memory: "1GiB", CPUTime: "10m"}) {
		t.Fatalf("sandbox_limits: %+v, %v", cfg.SandboxLimits, err)
	}
	v.Set("sandbox_limits", map[string]any{"memory": "lots"})
	if _, err := cli.Load[ServeConfig](v, ""); err == nil || !strings.Contains(err.Error(), "sandbox_limits.memory") {
		t.Fatalf("a bad sandbox_limits.memory: %v", err)
	}
}
