package execenv_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/agentfleet/agentfleet/execenv"
	"github.com/agentfleet/agentfleet/execenv/execenvtest"
)

// TestLocalConformanceCreateOnFirstUse: a Local whose working directory
// does not exist yet passes the whole suite.
func TestLocalConformanceCreateOnFirstUse(t *testing.T) {
	execenvtest.Exercise(t, func(t *testing.T, dir string) execenv.Environment {
		return newLocal(t, execenv.LocalConfig{WorkingDir: filepath.Join(dir, "later", "wd"), CreateOnFirstUse: true})
	})
}

// deferredLocal returns an initialized CreateOnFirstUse Local whose working
// directory does not exist.
func deferredLocal(t *testing.T) (*execenv.Local, string) {
	t.Helper()
	wd := filepath.Join(t.TempDir(), "wd")
	env := newLocal(t, execenv.LocalConfig{WorkingDir: wd, CreateOnFirstUse: true})
	if err := env.Initialize(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Cleanup(context.Background()) })
	return env, wd
}

func isDir(t *testing.T, dir string) bool {
	t.Helper()
	fi, err := os.Stat(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	return err == nil && fi.IsDir()
}

// TestCreateOnFirstUseReadsDoNotCreate: Initialize and reads of paths in
// the directory find nothing and leave it uncreated.
func TestCreateOnFirstUseReadsDoNotCreate(t *testing.T) {
	t.Parallel()
	env, wd := deferredLocal(t)
	ctx := testCtx(t)
	if _, err := env.ReadFile(ctx, "AGENTS.md"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadFile: %v, want not found", err)
	}
	if _, err := env.OpenFile(ctx, filepath.Join(wd, "a.txt")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("OpenFile: %v, want not found", err)
	}
	if _, err := env.Stat(ctx, "sub/dir"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Stat: %v, want not found", err)
	}
	if ok, err := env.Exists(ctx, ".git"); ok || err != nil {
		t.Errorf("Exists(.git) = %v, %v; want false, nil", ok, err)
	}
	if isDir(t, wd) {
		t.Fatal("a read created the working directory")
	}
	if execenv.MayBeGitRepo(ctx, env) {
		t.Error("MayBeGitRepo is true for a working directory that does not exist")
	}
	if isDir(t, wd) {
		t.Fatal("MayBeGitRepo created the working directory")
	}
}

// TestCreateOnFirstUseOperationsCreate: every operation that needs the
// directory creates it first and then behaves as on an empty directory;
// Stat and Exists of the directory itself see it.
func TestCreateOnFirstUseOperationsCreate(t *testing.T) {
	t.Parallel()
	notFound := func(err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	for name, op := range map[string]func(ctx context.Context, env *execenv.Local) error{
		"WriteFile": func(ctx context.Context, env *execenv.Local) error { return env.WriteFile(ctx, "f", []byte("x")) },
		"Exec": func(ctx context.Context, env *execenv.Local) error {
			res, err := env.Exec(ctx, execenv.ExecRequest{Command: "ls -A | wc -l"})
			if err == nil && res.Stdout != "0\n" {
				err = errors.New("ls saw " + res.Stdout + res.Stderr)
			}
			return err
		},
		"List": func(ctx context.Context, env *execenv.Local) error {
			entries, err := env.List(ctx, "", 2)
			if err == nil && len(entries) != 0 {
				err = errors.New("entries in an empty directory")
			}
			return err
		},
		"Glob": func(ctx context.Context, env *execenv.Local) error {
			_, err := env.Glob(ctx, execenv.GlobRequest{Pattern: "**/*"})
			return err
		},
		"Grep": func(ctx context.Context, env *execenv.Local) error {
			_, err := env.Grep(ctx, execenv.GrepRequest{Pattern: "x"})
			return err
		},
		"Remove": func(ctx context.Context, env *execenv.Local) error { return notFound(env.Remove(ctx, "f")) },
		"Rename": func(ctx context.Context, env *execenv.Local) error { return notFound(env.Rename(ctx, "f", "g")) },
		"StatItself": func(ctx context.Context, env *execenv.Local) error {
			fi, err := env.Stat(ctx, "")
			if err == nil && !fi.IsDir {
				err = errors.New("the working directory is not a directory")
			}
			return err
		},
		"ExistsItself": func(ctx context.Context, env *execenv.Local) error {
			ok, err := env.Exists(ctx, env.WorkingDir())
			if err == nil && !ok {
				err = errors.New("the working directory does not exist")
			}
			return err
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			env, wd := deferredLocal(t)
			if err := op(testCtx(t), env); err != nil {
				t.Fatal(err)
			}
			if !isDir(t, wd) {
				t.Fatal("the working directory was not created")
			}
		})
	}
}

// TestCreateOnFirstUseConcurrent: operations racing to be first all
// succeed.
func TestCreateOnFirstUseConcurrent(t *testing.T) {
	t.Parallel()
	env, wd := deferredLocal(t)
	ctx := testCtx(t)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Go(func() {
			errs <- env.WriteFile(ctx, filepath.Join("d", string(rune('a'+i))), []byte("x"))
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if entries, err := os.ReadDir(filepath.Join(wd, "d")); err != nil || len(entries) != 8 {
		t.Fatalf("%d files, %v; want 8", len(entries), err)
	}
}

// TestCreateOnFirstUseRetries: a failed creation is tried again by the
// next operation.
func TestCreateOnFirstUseRetries(t *testing.T) {
	t.Parallel()
	parent := filepath.Join(t.TempDir(), "parent")
	if err := os.WriteFile(parent, nil, 0o644); err != nil { // a file where a directory must go
		t.Fatal(err)
	}
	env := newLocal(t, execenv.LocalConfig{WorkingDir: filepath.Join(parent, "wd"), CreateOnFirstUse: true})
	ctx := testCtx(t)
	if _, err := env.Exec(ctx, execenv.ExecRequest{Command: "true"}); err == nil {
		t.Fatal("Exec ran although its working directory cannot be created")
	}
	if err := os.Remove(parent); err != nil {
		t.Fatal(err)
	}
	if res, err := env.Exec(ctx, execenv.ExecRequest{Command: "pwd"}); err != nil || res.Stdout != env.WorkingDir()+"\n" {
		t.Fatalf("second Exec: %+v, %v", res, err)
	}
}

// TestCreateOnFirstUseExistingDir: a directory that already exists (a
// resumed task) is used as it is.
func TestCreateOnFirstUseExistingDir(t *testing.T) {
	t.Parallel()
	wd := t.TempDir()
	if err := os.WriteFile(filepath.Join(wd, "kept.txt"), []byte("kept"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := newLocal(t, execenv.LocalConfig{WorkingDir: wd, CreateOnFirstUse: true})
	ctx := testCtx(t)
	if b, err := env.ReadFile(ctx, "kept.txt"); err != nil || string(b) != "kept" {
		t.Fatalf("ReadFile = %q, %v", b, err)
	}
	if entries, err := env.List(ctx, "", 1); err != nil || len(entries) != 1 {
		t.Fatalf("List = %+v, %v", entries, err)
	}
}
