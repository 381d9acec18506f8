package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentfleet/agentfleet/execenv"
	"github.com/agentfleet/agentfleet/llm"
)

// bundle is what most tool tests need: a Local environment on a temp dir and
// the core registry.
type bundle struct {
	dir string
	env execenv.Environment
	reg *Registry
}

func setup(t testing.TB) *bundle {
	t.Helper()
	dir := t.TempDir()
	env, err := execenv.NewLocal(execenv.LocalConfig{WorkingDir: dir})
	if err != nil {
		t.Fatalf("NewLocal: %v", err)
	}
	if err := env.Initialize(context.Background()); err != nil {
		t.Fatalf("Initialize: %v", err)
	}
	t.Cleanup(func() { _ = env.Cleanup(context.Background()) })
	return &bundle{dir: dir, env: env, reg: Core()}
}

// write creates a file under the bundle's directory.
func (b *bundle) write(t testing.TB, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(b.dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func (b *bundle) read(t testing.TB, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(b.dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// call runs one tool call through the pipeline with args marshalled to JSON.
func (b *bundle) call(t testing.TB, name string, args any) Result {
	t.Helper()
	return b.callOpts(t, name, args, ExecOptions{})
}

func (b *bundle) callOpts(t testing.TB, name string, args any, opts ExecOptions) Result {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	return b.reg.Execute(context.Background(), llm.ToolCall{ID: "call-1", Name: name, Arguments: raw}, b.env, opts)
}

// args is shorthand for a JSON object of arguments.
type args = map[string]any
