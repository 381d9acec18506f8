package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/fleet/api"
	"github.com/agentfleet/agentfleet/store"
)

// TestPrintUsageNamesUnpricedModels: `dispatcher usage` says which
// models' spend has no price, rather than showing it as $0 alone.
func TestPrintUsageNamesUnpricedModels(t *testing.T) {
	var out bytes.Buffer
	printUsage(&out, api.UsageReport{Rows: []api.UsageRow{{Sessions: 2, Usage: store.Usage{InputTokens: 100, OutputTokens: 20}}},
		Unpriced: []api.UsageRow{{Key: "mystery-model", Sessions: 2, Usage: store.Usage{InputTokens: 100, OutputTokens: 20}}}})
	if got := out.String(); !strings.Contains(got, "unpriced: mystery-model, 2 sessions, 120 tokens") || !strings.Contains(got, "prices.mystery-model") {
		t.Fatalf("usage output:\n%s", got)
	}
}
