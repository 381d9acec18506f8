package execenv_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/agentfleet/agentfleet/internal/testenv"

	"github.com/agentfleet/agentfleet/execenv"
)

// gitSaysInside asks git itself, the reference MayBeGitRepo must never
// contradict with a false.
func gitSaysInside(t *testing.T, dir string) bool {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		testenv.SkipOrFatal(t, "git is not installed")
	}
	return exec.Command("git", "-C", dir, "rev-parse", "--is-inside-work-tree").Run() == nil
}

func TestMayBeGitRepo(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	plain := filepath.Join(root, "plain", "deep")
	repo := filepath.Join(root, "repo")
	nested := filepath.Join(repo, "a", "b")
	worktree := filepath.Join(root, "worktree")
	for _, d := range []string{plain, nested, worktree} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := exec.Command("git", "init", "-q", repo).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	// A ".git" file, as in a linked worktree or a submodule.
	if err := os.WriteFile(filepath.Join(worktree, ".git"), []byte("gitdir: "+filepath.Join(repo, ".git")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		dir  string
		want bool
	}{{repo, true}, {nested, true}, {worktree, true}, {plain, false}} {
		got := execenv.MayBeGitRepo(ctx, newLocal(t, execenv.LocalConfig{WorkingDir: tc.dir}))
		if tc.want && !got {
			t.Errorf("MayBeGitRepo(%s) = false inside a repository", tc.dir)
		}
		if !tc.want && gitSaysInside(t, tc.dir) {
			continue // the temporary directory itself lies in a repository here
		}
		if got != tc.want {
			t.Errorf("MayBeGitRepo(%s) = %v, want %v", tc.dir, got, tc.want)
		}
	}
}

// TestMayBeGitRepoMissingDir: a working directory that does not exist is
// in no repository, even under one, and is not created by the question.
func TestMayBeGitRepoMissingDir(t *testing.T) {
	repo := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", repo).CombinedOutput(); err != nil {
		testenv.SkipOrFatal(t, fmt.Sprintf("git init: %v: %s", err, out))
	}
	ctx := context.Background()
	for _, cfg := range []execenv.LocalConfig{
		{WorkingDir: filepath.Join(repo, "missing")},
		{WorkingDir: filepath.Join(repo, "later"), CreateOnFirstUse: true},
	} {
		env := newLocal(t, cfg)
		if execenv.MayBeGitRepo(ctx, env) {
			t.Errorf("MayBeGitRepo(%s) = true for a directory that does not exist", cfg.WorkingDir)
		}
		if _, err := os.Stat(cfg.WorkingDir); !os.IsNotExist(err) {
			t.Errorf("MayBeGitRepo created %s: %v", cfg.WorkingDir, err)
		}
		if err := env.WriteFile(ctx, "f", nil); err != nil {
			t.Fatal(err)
		}
		if !execenv.MayBeGitRepo(ctx, env) {
			t.Errorf("MayBeGitRepo(%s) = false inside a repository once the directory exists", cfg.WorkingDir)
		}
	}
}

// BenchmarkMayBeGitRepo: the question a fleet asks twice per task, about a
// workspace nothing created yet and about an existing plain directory.
func BenchmarkMayBeGitRepo(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	for name, wd := range map[string]string{"missing": filepath.Join(dir, "missing"), "plain": dir} {
		env := newLocal(b, execenv.LocalConfig{WorkingDir: wd})
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				execenv.MayBeGitRepo(ctx, env)
			}
		})
	}
}
