package patch_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/execenv"
	"github.com/agentfleet/agentfleet/tools/patch"
)

// FuzzParseApply feeds arbitrary text to the v4a parser and applies what
// it accepts to an in-memory tree holding one file. Neither may panic, nor
// Update on each hunk; an accepted patch writes and removes only the paths
// its operations name.
// Seeds: every patch of the codex-rs conformance scenarios, read in place.
func FuzzParseApply(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("..", "..", "..", "shared", "conformance", "apply_patch", "*", "patch.txt"))
	for _, path := range seeds {
		if data, err := os.ReadFile(path); err == nil {
			f.Add(string(data))
		}
	}
	f.Add("*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+uno\n*** End Patch")
	f.Add("*** Begin Patch\n*** Add File: b/c.txt\n+x\n*** End Patch\n")
	f.Fuzz(func(t *testing.T, text string) {
		p, err := patch.Parse(text)
		if err != nil {
			return
		}
		named := map[string]bool{}
		for _, op := range p.Files {
			named[op.Path], named[op.MoveTo] = true, true
			for _, c := range op.Chunks {
				_, _ = patch.Update("one\ntwo\nthree\n", []patch.Chunk{c})
			}
		}
		mem := memFS{"a.txt": "one\ntwo\nthree\n"}
		touched := map[string]bool{}
		_, _ = patch.Apply(context.Background(), recording{mem, touched}, p)
		for path := range touched {
			if !named[path] {
				t.Fatalf("Apply changed %q, which no operation names; patch:\n%s", path, text)
			}
		}
	})
}

// memFS is a flat in-memory file tree: path -> content.
type memFS map[string]string

func (m memFS) ReadFile(_ context.Context, path string) ([]byte, error) {
	if s, ok := m[path]; ok {
		return []byte(s), nil
	}
	return nil, fs.ErrNotExist
}

func (m memFS) WriteFile(_ context.Context, path string, data []byte) error {
	m[path] = string(data)
	return nil
}

func (m memFS) Stat(_ context.Context, path string) (execenv.FileInfo, error) {
	if s, ok := m[path]; ok {
		return execenv.FileInfo{Path: path, Size: int64(len(s))}, nil
	}
	for p := range m {
		if strings.HasPrefix(p, strings.TrimSuffix(path, "/")+"/") {
			return execenv.FileInfo{Path: path, IsDir: true}, nil
		}
	}
	return execenv.FileInfo{}, fs.ErrNotExist
}

func (m memFS) Remove(_ context.Context, path string) error {
	if _, ok := m[path]; !ok {
		return fs.ErrNotExist
	}
	delete(m, path)
	return nil
}

// recording notes every path written or removed.
type recording struct {
	memFS
	touched map[string]bool
}

func (r recording) WriteFile(ctx context.Context, path string, data []byte) error {
	r.touched[path] = true
	return r.memFS.WriteFile(ctx, path, data)
}

func (r recording) Remove(ctx context.Context, path string) error {
	r.touched[path] = true
	return r.memFS.Remove(ctx, path)
}
