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

	"github.com/agentfleet/agentfleet/cmd/internal/cli"
)

func TestRunConfigFromFileEnvAndFlags(t *testing.T) {
	file := filepath.Join(t.TempDir(), "w.yaml")
	yaml := "sessions: 3\nqueues: [a, b]\ndrain_grace: 2s\ndatabase_url: from-file.db\nnats: {replicas: 2}\n" +
		"ssh_keys: {k: {use_agent: true}}\n" +
		"delivery: {task_url: 'https://f/{task_id}', tokens: {bot: {token_env: FORGE_TOKEN, forge: gitlab, hosts: [git.example.com]}}}\n"
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AGENTFLEET_DATABASE_URL", "postgres://from-env/db")
	t.Setenv("AGENTFLEET_WORKER_ID", "env-worker")
	v := viper.New()
	cmd := newRunCmd()
	if err := cmd.ParseFlags([]string{"--sessions", "5"}); err != nil {
		t.Fatal(err)
	}
	_ = v.BindPFlag("sessions", cmd.Flags().Lookup("sessions"))
	cfg, err := cli.Load[runConfig](v, file)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.DatabaseURL != "postgres://from-env/db" || cfg.ID != "env-worker" || cfg.Sessions != 5 ||
		strings.Join(cfg.Queues, ",") != "a,b" || cfg.DrainGrace != 2*time.Second || cfg.NATS.Replicas != 2 ||
		!cfg.SSHKeys["k"].UseAgent || cfg.Delivery.TaskURL != "https://f/{task_id}" ||
		cfg.Delivery.Tokens["bot"].Forge != "gitlab" || cfg.Delivery.Tokens["bot"].Hosts[0] != "git.example.com" {
		t.Fatalf("config %+v", cfg)
	}
	if cfg.Listen != ":9090" || cfg.LogFormat != "json" || cfg.NATS.URL != "nats://127.0.0.1:4222" {
		t.Fatalf("defaults: listen %q, log_format %q, nats.url %q", cfg.Listen, cfg.LogFormat, cfg.NATS.URL)
	}
}

// TestRunConfigEveryKeyFromEnv sets top-level and nested keys only through
// AGENTFLEET_* variables: each must arrive, though no file or default names
// it.
func TestRunConfigEveryKeyFromEnv(t *testing.T) {
	for k, v := range map[string]string{
		"DATABASE_URL": "postgres://env/db", "PREFIX": "fleet2", "LISTEN": "127.0.0.1:0", "LOG_FORMAT": "text",
		"LOG_LEVEL": "debug", "NATS_URL": "nats://n1:4222,nats://n2:4222", "NATS_USER": "worker", "NATS_PASSWORD": "pw", "NATS_ALLOW_PLAINTEXT": "true",
		"NATS_REPLICAS": "3", "NATS_ACK_WAIT": "90s", "NATS_MAX_DELIVER": "7", "NATS_WORKER_GONE_AFTER": "10m", "WORKER_ID": "w-1", "QUEUES": "a,b", "TENANTS": "team-a,team-b",
		"SESSIONS": "8", "WORKSPACE_ROOT": "/var/ws", "DRAIN_GRACE": "1m", "KEEP_FAILED": "1h", "ALLOWED_PROFILES": "openai",
		"KNOWN_HOSTS_FILE": "/etc/kh", "HEARTBEAT_INTERVAL": "5s", "STALE_AFTER": "20s", "MAX_LIVE_CHILDREN": "3",
		"NO_DEAD_LETTER_WATCH": "true", "SANDBOX": "off", "SANDBOX_NETWORK": "allowlist", "SANDBOX_ALLOW_HOSTS": "github.com,*.golang.org",
		"SANDBOX_READ_ONLY": "/opt/cache", "POLICY_SHARED_ROOTS": "/srv/shared,/data/team",
		"POLICY_REPOSITORIES_ALLOW": "github.com/acme/,gitea.internal/team", "POLICY_REPOSITORIES_ALLOW_LOCAL": "/srv/git",
		"POLICY_REPOSITORIES_ALLOW_PRIVATE": "10.1.0.0/16",
		"POLICY_IMAGES_ALLOW":               "golang,ghcr.io/acme", "POLICY_IMAGES_DEFAULT": "golang:1.22",
		"IMAGE_CACHE_DIR": "/var/images", "IMAGE_CACHE_MAX_SIZE": "5GiB",
		"REPO_CACHE_DIR": "/var/repos", "REPO_CACHE_MAX_SIZE": "3GiB", "REPO_CACHE_DISABLED": "true",
	} {
		t.Setenv("AGENTFLEET_"+k, v)
	}
	cfg, err := cli.Load[runConfig](viper.New(), "")
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
		{"log_level", cfg.LogLevel, "debug"},
		{"nats.url", cfg.NATS.URL, "nats://n1:4222,nats://n2:4222"},
		{"nats.user", cfg.NATS.User, "worker"},
		{"nats.password", cfg.NATS.Password, "pw"},
		{"nats.replicas", q.Replicas, 3},
		{"nats.ack_wait", q.AckWait, 90 * time.Second},
		{"nats.max_deliver", q.MaxDeliver, 7},
		{"nats.worker_gone_after", q.WorkerInactiveThreshold, 10 * time.Minute},
		{"worker_id", cfg.ID, "w-1"},
		{"queues", strings.Join(cfg.Queues, ","), "a,b"},
		{"tenants", strings.Join(cfg.Tenants, ","), "team-a,team-b"},
		{"sessions", cfg.Sessions, 8},
		{"workspace_root", cfg.WorkspaceRoot, "/var/ws"},
		{"drain_grace", cfg.DrainGrace, time.Minute},
		{"keep_failed", cfg.KeepFailed, time.Hour},
		{"allowed_profiles", strings.Join(cfg.AllowedProfiles, ","), "openai"},
		{"known_hosts_file", cfg.KnownHostsFile, "/etc/kh"},
		{"heartbeat_interval", cfg.HeartbeatInterval, 5 * time.Second},
		{"stale_after", cfg.StaleAfter, 20 * time.Second},
		{"max_live_children", cfg.MaxLiveChildren, 3},
		{"no_dead_letter_watch", cfg.NoDeadLetterWatch, true},
		{"sandbox", cfg.Sandbox, "off"},
		{"sandbox_network", cfg.SandboxBound.Network, "allowlist"},
		{"sandbox_allow_hosts", strings.Join(cfg.SandboxBound.AllowHosts, " "), "github.com *.golang.org"},
		{"sandbox_read_only", strings.Join(cfg.SandboxReadOnly, " "), "/opt/cache"},
		{"policy.shared_roots", strings.Join(cfg.Policy.SharedRoots, " "), "/srv/shared /data/team"},
		{"policy.repositories.allow", strings.Join(cfg.Policy.Repositories.Allow, " "), "github.com/acme/ gitea.internal/team"},
		{"policy.repositories.allow_local", strings.Join(cfg.Policy.Repositories.AllowLocal, " "), "/srv/git"},
		{"policy.repositories.allow_private", strings.Join(cfg.Policy.Repositories.AllowPrivate, " "), "10.1.0.0/16"},
		{"policy.images.allow", strings.Join(cfg.Policy.Images.Allow, " "), "golang ghcr.io/acme"},
		{"policy.images.default", cfg.Policy.Images.Default, "golang:1.22"},
		{"image_cache.dir", cfg.ImageCache.Dir, "/var/images"},
		{"image_cache.max_size", cfg.ImageCache.MaxSize, "5GiB"},
		{"repo_cache.dir", cfg.RepoCache.Dir, "/var/repos"},
		{"repo_cache.max_size", cfg.RepoCache.MaxSize, "3GiB"},
		{"repo_cache.disabled", cfg.RepoCache.Disabled, true},
	} {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.key, c.got, c.want)
		}
	}
}

func TestRunConfigErrorsNameTheField(t *testing.T) {
	t.Setenv("AGENTFLEET_SESSIONS", "-2")
	t.Setenv("AGENTFLEET_NATS_REPLICAS", "7")
	t.Setenv("AGENTFLEET_NATS_WORKER_GONE_AFTER", "10ms")
	t.Setenv("AGENTFLEET_SANDBOX", "maybe")
	t.Setenv("AGENTFLEET_SANDBOX_NETWORK", "everything")
	var stderr bytes.Buffer
	code := execute(context.Background(), []string{"run", "--listen", "off", "--log-level", "loud"}, nil, &bytes.Buffer{}, &stderr)
	if code != 2 {
		t.Fatalf("exit %d, want 2 (bad usage)", code)
	}
	for _, want := range []string{"database_url is required", "sessions must be >= 1", "nats.replicas must be between 1 and 5",
		"nats.worker_gone_after must be at least 1s", "log_level must be", `sandbox must be "on", "off" or "auto"`} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr %q lacks %q", stderr.String(), want)
		}
	}
}

// `worker run` takes the model server and model from the same variables
// as dev mode, where its configuration leaves them unset; a configured
// provider wins.
func TestRunConfigProvidersFromModelEnv(t *testing.T) {
	env := map[string]string{"AGENTFLEET_LLM_BASE_URL": "http://localhost:11434/v1", "AGENTFLEET_MODEL": "qwen2.5-coder:7b",
		"AGENTFLEET_LLM_API_KEY": "local-key", "ANTHROPIC_API_KEY": "sk-ant", "AGENTFLEET_DATABASE_URL": "w.db"}
	t.Setenv("AGENTFLEET_DATABASE_URL", "w.db")
	cfg, err := loadRunConfig(viper.New(), "", func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	openai, anthropic := cfg.Providers["openai"], cfg.Providers["anthropic"]
	if openai.BaseURL != env["AGENTFLEET_LLM_BASE_URL"] || openai.Provider != "chatcompat" || openai.APIKey != "local-key" ||
		openai.DefaultModel != "qwen2.5-coder:7b" || anthropic.DefaultModel != "qwen2.5-coder:7b" {
		t.Fatalf("providers from the environment: %+v", cfg.Providers)
	}

	file := filepath.Join(t.TempDir(), "w.yaml")
	if err := os.WriteFile(file, []byte("providers: {openai: {base_url: http://configured/v1, default_model: m1}}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err = loadRunConfig(viper.New(), file, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if p := cfg.Providers["openai"]; p.BaseURL != "http://configured/v1" || p.DefaultModel != "m1" {
		t.Fatalf("the environment overrode a configured provider: %+v", p)
	}

	delete(env, "AGENTFLEET_MODEL")
	if _, err := loadRunConfig(viper.New(), "", func(k string) string { return env[k] }); err == nil ||
		!strings.Contains(err.Error(), "AGENTFLEET_MODEL") {
		t.Fatalf("a base URL without a model: %v, want an error naming AGENTFLEET_MODEL", err)
	}
}
