package subdir_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentfleet/agentfleet/execenv"
	"github.com/agentfleet/agentfleet/execenv/execenvtest"
	"github.com/agentfleet/agentfleet/execenv/subdir"
)

func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// parent returns an initialized local environment working in dir, cleaned
// up when the test ends.
func parent(t *testing.T, dir string) execenv.Environment {
	t.Helper()
	env, err := execenv.NewLocal(execenv.LocalConfig{WorkingDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if err := env.Initialize(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := env.Cleanup(context.Background()); err != nil {
			t.Errorf("parent Cleanup: %v", err)
		}
	})
	return env
}

// TestConformance: a local environment scoped to the suite's directory
// (its parent working one level up) passes the whole suite, so every
// relative path, command directory and search root lands in the
// subdirectory.
func TestConformance(t *testing.T) {
	for k, v := range execenvtest.ProbeEnv {
		t.Setenv(k, v)
	}
	execenvtest.Exercise(t, func(t *testing.T, dir string) execenv.Environment {
		env, err := subdir.Scope(testCtx(t), parent(t, filepath.Dir(dir)), filepath.Base(dir))
		if err != nil {
			t.Fatal(err)
		}
		return env
	})
}

func TestScopeMovesTheDefaultDirectoryOnly(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "sub", "deeper"), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, p := testCtx(t), parent(t, root)
	env, err := subdir.Scope(ctx, p, "sub/deeper/..")
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(root, "sub")
	if env.WorkingDir() != want || env.Describe().WorkingDir != want {
		t.Fatalf("WorkingDir %q, Describe %q; want %q", env.WorkingDir(), env.Describe().WorkingDir, want)
	}
	if err := env.WriteFile(ctx, "a.txt", []byte("in sub")); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(want, "a.txt")); err != nil || string(b) != "in sub" {
		t.Fatalf("relative write did not land in the subdirectory: %q, %v", b, err)
	}
	// Not a sandbox: absolute paths and ".." reach the parent's files.
	if err := env.WriteFile(ctx, "../top.txt", []byte("top")); err != nil {
		t.Fatal(err)
	}
	if b, err := env.ReadFile(ctx, filepath.Join(root, "top.txt")); err != nil || string(b) != "top" {
		t.Fatalf("absolute read through the scoped environment: %q, %v", b, err)
	}
	res, err := env.Exec(ctx, execenv.ExecRequest{Command: "pwd; cat a.txt", Dir: "deeper/.."})
	if err != nil || res.Stdout != want+"\nin sub" {
		t.Fatalf("command in %q: %+v, %v", want, res, err)
	}
}

func TestScopeLeavesTheLifecycleToTheParent(t *testing.T) {
	root := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, p := testCtx(t), parent(t, root)
	env, err := subdir.Scope(ctx, p, filepath.Join(root, "sub"))
	if err != nil {
		t.Fatal(err)
	}
	if err := env.Cleanup(ctx); err != nil {
		t.Fatal(err)
	}
	// The parent still runs commands after the child's Cleanup.
	res, err := p.Exec(ctx, execenv.ExecRequest{Command: "echo alive"})
	if err != nil || res.Stdout != "alive\n" {
		t.Fatalf("parent after the scoped Cleanup: %+v, %v", res, err)
	}
}

func TestScopeRejectsWhatIsNotADirectory(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "f"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, p := testCtx(t), parent(t, root)
	if _, err := subdir.Scope(ctx, p, "f"); err == nil || !strings.Contains(err.Error(), "is not a directory") {
		t.Fatalf("Scope on a file: %v", err)
	}
	if _, err := subdir.Scope(ctx, p, "missing"); err == nil {
		t.Fatal("Scope on a missing directory returned no error")
	}
	for _, sub := range []string{"", "."} {
		if env, err := subdir.Scope(ctx, p, sub); err != nil || env != p {
			t.Fatalf("Scope(%q) = %v, %v; want the parent itself", sub, env, err)
		}
	}
}
