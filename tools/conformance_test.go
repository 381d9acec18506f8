package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/agentfleet/agentfleet/internal/testenv"

	"github.com/agentfleet/agentfleet/execenv"
	"github.com/agentfleet/agentfleet/llm"
)

// conformanceDir returns ../shared/conformance/<name> relative to the
// repository root, skipping (or failing in CI) when it is absent.
func conformanceDir(t *testing.T, name string) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the test directory")
		}
		dir = parent
	}
	p := filepath.Join(dir, "..", "shared", "conformance", name)
	if _, err := os.Stat(p); err != nil {
		testenv.SkipOrFatal(t, fmt.Sprintf("conformance data not found at %s (%v); check out the shared folder next to the repository to run this test", p, err))
	}
	return p
}

// runApplyPatchConformance applies every scenario's patch.txt through the
// apply_patch tool in an environment made by newEnv on a copy of input/, and
// compares the tree with expected/ byte for byte.
func runApplyPatchConformance(t *testing.T, newEnv func(t *testing.T, dir string) execenv.Environment) {
	root := conformanceDir(t, "apply_patch")
	scenarios, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	reg := NewRegistry(ApplyPatch())
	n := 0
	for _, s := range scenarios {
		if !s.IsDir() {
			continue
		}
		n++
		t.Run(s.Name(), func(t *testing.T) {
			src := filepath.Join(root, s.Name())
			work := t.TempDir()
			copyTree(t, filepath.Join(src, "input"), work)
			patchText, err := os.ReadFile(filepath.Join(src, "patch.txt"))
			if err != nil {
				t.Fatal(err)
			}
			args, _ := json.Marshal(ApplyPatchParams{Patch: string(patchText)})
			res := reg.Execute(context.Background(), llm.ToolCall{ID: "p", Name: "apply_patch", Arguments: args}, newEnv(t, work), ExecOptions{})
			got, want := snapshot(t, work), snapshot(t, filepath.Join(src, "expected"))
			if !equalTrees(got, want) {
				t.Fatalf("tree differs after apply_patch (result %q)\ngot  %q\nwant %q", res.Content, got, want)
			}
		})
	}
	if n < 20 {
		t.Fatalf("found only %d scenarios in %s", n, root)
	}
}

func TestApplyPatchConformanceLocal(t *testing.T) {
	runApplyPatchConformance(t, func(t *testing.T, dir string) execenv.Environment {
		env, err := execenv.NewLocal(execenv.LocalConfig{WorkingDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		return env
	})
}

// copyTree copies the files under src (which may not exist) into dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
}

// snapshot maps each regular file under dir (relative path) to its content.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		files[filepath.ToSlash(rel)] = string(data)
		return err
	})
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return files
}

func equalTrees(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	keys := make([]string, 0, len(a))
	for k := range a {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if v, ok := b[k]; !ok || !bytes.Equal([]byte(v), []byte(a[k])) {
			return false
		}
	}
	return true
}
