package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/viper"

	"github.com/agentfleet/agentfleet/cmd/internal/cli"
)

// TestRunConfigPricesAndRateLimits: prices, rate_limits, a provider's
// credential and fallback model come from worker.yaml; a negative price
// and a rate limit of zero are refused, naming the key.
func TestRunConfigPricesAndRateLimits(t *testing.T) {
	file := filepath.Join(t.TempDir(), "w.yaml")
	yaml := `database_url: x.db
providers:
  anthropic: {credential: team-key, fallback_model: claude-haiku-4-5}
prices:
  claude-sonnet-4-5: {input_per_mtok: 3, output_per_mtok: 15, cache_read_per_mtok: 0.3, cache_write_per_mtok: 3.75}
rate_limits:
  - {provider: anthropic, credential: team-key, requests_per_minute: 4000, input_tokens_per_minute: 2000000, concurrent_requests: 50}
  - {provider: anthropic, credential: team-key, model: claude-opus-4-1, requests_per_minute: 100}
`
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := cli.Load[runConfig](viper.New(), file)
	if err != nil {
		t.Fatal(err)
	}
	pc := cfg.Providers["anthropic"]
	if pc.Credential != "team-key" || pc.FallbackModel != "claude-haiku-4-5" || cfg.Prices["claude-sonnet-4-5"].CacheWritePerMTok != 3.75 {
		t.Fatalf("providers %+v prices %+v", cfg.Providers, cfg.Prices)
	}
	if len(cfg.RateLimits) != 2 || cfg.RateLimits[0].RequestsPerMinute != 4000 || cfg.RateLimits[0].ConcurrentRequests != 50 ||
		cfg.RateLimits[1].Model != "claude-opus-4-1" || cfg.RateLimits[1].RequestsPerMinute != 100 {
		t.Fatalf("rate_limits %+v", cfg.RateLimits)
	}

	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("database_url: x.db\nprices: {m: {input_per_mtok: -1}}\nrate_limits: [{provider: anthropic}]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = cli.Load[runConfig](viper.New(), bad)
	for _, want := range []string{"prices.m.input_per_mtok must be a number >= 0", "rate_limits[0] sets no limit"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("bad config: %v, want %q", err, want)
		}
	}
}
