package dispatcher

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// TestOpenAPICoversRoutes checks that docs/openapi.yaml documents every
// route the API serves, and no route it does not.
func TestOpenAPICoversRoutes(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "docs", "openapi.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths map[string]map[string]any `yaml:"paths"`
	}
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("docs/openapi.yaml: %v", err)
	}
	documented := map[string]bool{}
	for path, ops := range doc.Paths {
		if !strings.HasPrefix(path, "/v1/") {
			continue
		}
		for method := range ops {
			if method != "parameters" {
				documented[strings.ToUpper(method)+" "+path] = true
			}
		}
	}
	served := map[string]bool{forgeEventsRoute: true} // beside /v1/, signed instead of the token
	for pattern := range (&handlers{}).routes() {
		if pattern != "/v1/" {
			served[pattern] = true
		}
	}
	for r := range served {
		if !documented[r] {
			t.Errorf("%s is served but not in docs/openapi.yaml", r)
		}
	}
	for r := range documented {
		if !served[r] {
			t.Errorf("%s is in docs/openapi.yaml but not served", r)
		}
	}
}
