package deploy

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"gopkg.in/yaml.v3"
)

// decodeFile decodes the JSON or YAML file at path (relative to deploy/)
// into v, failing the test with the file's name on any error.
func decodeFile(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Ext(path) == ".json" {
		err = json.Unmarshal(b, v)
	} else {
		err = yaml.Unmarshal(b, v)
	}
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
