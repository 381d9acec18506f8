package pricing_test

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/llm/pricing"
	"github.com/agentfleet/agentfleet/profiles"
)

// modelID matches the model ids the docs name, cloud spellings included.
var modelID = regexp.MustCompile(`\b((us|eu|apac|global)\.)?(anthropic\.)?(gpt-[0-9][a-z0-9.\-]*|o[34]-mini|o3|claude-[a-z0-9.\-]+(@[0-9]+)?(-v[0-9]+:[0-9]+)?|gemini-[0-9][a-z0-9.\-]*)`)

// docModels returns the model ids named in the repository's docs.
func docModels(t *testing.T) []string {
	root := filepath.Join("..", "..")
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, filepath.Join(root, "README.md"))
	var ids []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range modelID.FindAllString(string(data), -1) {
			ids = append(ids, strings.TrimRight(id, ".-"))
		}
	}
	if len(ids) == 0 {
		t.Fatal("found no model ids in the docs: has the layout changed?")
	}
	return ids
}

// Every default model of every profile, every model the docs name, and
// the Bedrock and Vertex spellings of the defaults have a price and an
// output limit: a session on them never costs a silent $0.
func TestEveryNamedModelIsPriced(t *testing.T) {
	tab := pricing.Builtin()
	var models []string
	for _, p := range profiles.All() {
		models = append(models, p.Model())
	}
	models = append(models, docModels(t)...)
	models = append(models,
		"anthropic.claude-sonnet-4-5-20250929-v1:0", "global.anthropic.claude-sonnet-4-5-20250929-v1:0",
		"us.anthropic.claude-haiku-4-5-20251001-v1:0", "eu.anthropic.claude-opus-4-1-20250805-v1:0",
		"claude-sonnet-4-5@20250929", "claude-opus-4-1@20250805",
		"publishers/google/models/gemini-2.5-pro", "models/gemini-3-pro-preview", "gpt-5.2", "gemini-2.5-flash")
	if missing := tab.Unpriced(models...); missing != nil {
		t.Fatalf("no price for %v", missing)
	}
	for _, m := range models {
		if _, ok := pricing.MaxOutputTokens(m); !ok {
			t.Errorf("no output limit for %s", m)
		}
	}
}

func TestCloudIDsPricedAsTheProvidersOwn(t *testing.T) {
	tab := pricing.Builtin()
	for cloud, own := range map[string]string{
		"us.anthropic.claude-sonnet-4-20250514-v1:0": "claude-sonnet-4",
		"anthropic.claude-3-5-haiku-20241022-v1:0":   "claude-3-5-haiku",
		"claude-sonnet-4@20250514":                   "claude-sonnet-4",
		"claude-opus-4-5@20251101":                   "claude-opus-4-5",
		"publishers/google/models/gemini-2.5-flash":  "gemini-2.5-flash",
		// Bedrock: in-region ids and every cross-region inference profile
		// prefix are priced as the base model.
		"anthropic.claude-sonnet-4-5-20250929-v1:0":        "claude-sonnet-4-5",
		"global.anthropic.claude-sonnet-4-5-20250929-v1:0": "claude-sonnet-4-5",
		"eu.anthropic.claude-haiku-4-5-20251001-v1:0":      "claude-haiku-4-5",
		"apac.anthropic.claude-sonnet-4-20250514-v1:0":     "claude-sonnet-4",
		"jp.anthropic.claude-haiku-4-5-20251001-v1:0":      "claude-haiku-4-5",
		"au.anthropic.claude-sonnet-4-5-20250929-v1:0":     "claude-sonnet-4-5",
		"us.anthropic.claude-opus-4-5-20251101-v1:0":       "claude-opus-4-5",
		"us.anthropic.claude-opus-4-1-20250805-v1:0":       "claude-opus-4-1",
		"us.anthropic.claude-3-7-sonnet-20250219-v1:0":     "claude-3-7-sonnet",
		"us.anthropic.claude-3-5-sonnet-20241022-v2:0":     "claude-3-5-sonnet",
		"anthropic.claude-3-haiku-20240307-v1:0":           "claude-3-haiku",
		"anthropic.claude-3-opus-20240229-v1:0":            "claude-3-opus",
	} {
		got, ok := tab.Lookup(cloud)
		want, _ := tab.Lookup(own)
		if !ok || got != want {
			t.Errorf("%s priced %+v (%v), want %s's %+v", cloud, got, ok, own, want)
		}
	}
	if p, _ := tab.Lookup("us.anthropic.claude-3-5-sonnet-20241022-v2:0"); p.InputPerMTok != 3 || p.OutputPerMTok != 15 {
		t.Errorf("Bedrock Claude 3.5 Sonnet v2 priced %+v", p)
	}
	if n, _ := pricing.MaxOutputTokens("us.anthropic.claude-3-5-haiku-20241022-v1:0"); n != 8_192 {
		t.Errorf("Bedrock haiku 3.5 output limit %d", n)
	}
}

// An unknown model is unpriced, which is not the same as a model priced
// at $0 by the operator.
func TestUnpricedIsNotFree(t *testing.T) {
	book, err := pricing.NewBook(map[string]pricing.Price{"local-llama": {}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !book.Known("local-llama") || book.Known("mystery-model") {
		t.Fatalf("Known: local-llama %v, mystery-model %v", book.Known("local-llama"), book.Known("mystery-model"))
	}
	err = book.RequirePriced("claude-sonnet-4-5", "mystery-model", "local-llama", "mystery-model")
	var ue *pricing.UnpricedError
	if !errors.As(err, &ue) || len(ue.Models) != 1 || ue.Models[0] != "mystery-model" {
		t.Fatalf("RequirePriced = %v", err)
	}
	if !strings.Contains(err.Error(), "mystery-model") || !strings.Contains(err.Error(), "prices.<model>") {
		t.Fatalf("error does not say what to do: %v", err)
	}
	if err := book.RequirePriced("gpt-5.2-codex", "gemini-2.5-pro"); err != nil {
		t.Fatal(err)
	}
}
