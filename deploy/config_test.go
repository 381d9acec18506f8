package deploy

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// documentedVariables returns the AGENTFLEET_* variable of every key in
// README.md's "Configuration reference", the one place the keys of
// `dispatcher serve` and `worker run` are documented.
func documentedVariables(t *testing.T) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## Configuration reference\n")
	if !ok {
		t.Fatal(`README.md has no "## Configuration reference" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	vars := map[string]bool{}
	for _, m := range regexp.MustCompile("`([a-z_]+(?:\\.[a-z_]+)*)`").FindAllStringSubmatch(section, -1) {
		vars["AGENTFLEET_"+strings.ToUpper(strings.ReplaceAll(m[1], ".", "_"))] = true
	}
	return vars
}

// TestDeployVariablesAreDocumentedKeys checks that every AGENTFLEET_*
// variable the deployment files set is a configuration key the binaries
// read: a misspelt or renamed one would be ignored without a word.
func TestDeployVariablesAreDocumentedKeys(t *testing.T) {
	documented := documentedVariables(t)
	for _, want := range []string{"AGENTFLEET_DATABASE_URL", "AGENTFLEET_NATS_REPLICAS", "AGENTFLEET_SESSIONS"} {
		if !documented[want] {
			t.Fatalf("README.md's configuration reference lacks %s; the parse found %d keys", want, len(documented))
		}
	}
	varRE := regexp.MustCompile(`AGENTFLEET_[A-Z0-9_]+`)
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(path, ".go") || strings.HasPrefix(path, filepath.Join("kubernetes", "schemas")) {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, v := range varRE.FindAllString(string(b), -1) {
			if !documented[v] {
				t.Errorf("%s sets %s, which is no key of README.md's configuration reference", path, v)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
