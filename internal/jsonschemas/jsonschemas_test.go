package jsonschemas_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/agentfleet/agentfleet/internal/jsonschemas"
)

// A schema that names a file, relatively or by URL, does not make the
// compiler read it: every reference must stay inside the schema. (The
// library's default loader reads files.)
func TestCompilerLoadsNothing(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(dir, "other.json")
	if err := os.WriteFile(secret, []byte(`{"type":"string"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	for _, ref := range []string{"other.json", "file://" + secret} {
		doc, err := jsonschema.UnmarshalJSON(strings.NewReader(`{"$ref":"` + ref + `"}`))
		if err != nil {
			t.Fatal(err)
		}
		c := jsonschemas.NewCompiler()
		if err := c.AddResource("file://"+dir+"/schema.json", doc); err != nil {
			t.Fatal(err)
		}
		// The library wraps the loader's error as text.
		if _, err := c.Compile("file://" + dir + "/schema.json"); err == nil || !strings.Contains(err.Error(), jsonschemas.ErrNoLoad.Error()) {
			t.Errorf("$ref %s: %v; want ErrNoLoad", ref, err)
		}
	}
	doc, _ := jsonschema.UnmarshalJSON(strings.NewReader(`{"$defs":{"n":{"type":"number"}},"$ref":"#/$defs/n"}`))
	c := jsonschemas.NewCompiler()
	if err := c.AddResource("schema.json", doc); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Compile("schema.json"); err != nil {
		t.Errorf("a reference inside the schema: %v", err)
	}
}
