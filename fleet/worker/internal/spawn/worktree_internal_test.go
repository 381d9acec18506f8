package spawn

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/agent"
	"github.com/agentfleet/agentfleet/execenv"
	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/internal/testenv"
	"github.com/agentfleet/agentfleet/store"
)

// These tests run the worktree script with real git in an unconfined
// local environment; fleet/worker's worktree tests run it in the sandbox
// through whole fleets.

func runGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("git %v: %v: %s", args, err, stderr.String())
	}
	return strings.TrimSpace(out.String())
}

func write(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// parentIn returns a spawner whose parent works in dir, unconfined.
func parentIn(t *testing.T, dir string) *Spawner {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		testenv.SkipOrFatal(t, "git is not installed")
	}
	env, err := execenv.NewLocal(execenv.LocalConfig{WorkingDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	return New(Fleet{}, Parent{Task: store.Task{ID: uuid.New()}, WorkingDir: dir, Env: env, Log: slog.Default(),
		Spec: fleet.TaskSpec{Environment: fleet.Environment{Kind: fleet.EnvLocal}}})
}

// ended is child task id, ended in state, as working in dir.
func ended(t *testing.T, state store.TaskState, dir string) store.Task {
	t.Helper()
	spec, _ := json.Marshal(fleet.TaskSpec{Environment: fleet.Environment{Kind: fleet.EnvLocal, WorkingDir: dir}})
	return store.Task{ID: uuid.New(), State: state, Spec: spec}
}

// TestWorktreeOfAnEmptyRepository: a repository without a commit still
// gives its child a worktree with the parent's files, merged back.
func TestWorktreeOfAnEmptyRepository(t *testing.T) {
	dir := t.TempDir()
	runGit(t, dir, "init", "-q")
	write(t, filepath.Join(dir, "a.txt"), "a\n")
	s := parentIn(t, dir)
	ctx := context.Background()
	wt, err := s.childDir(ctx, "call-1")
	if err != nil {
		t.Fatal(err)
	}
	if again, err := s.childDir(ctx, "call-1"); err != nil || again != wt {
		t.Fatalf("the same call again: %q, %v; want %q", again, err, wt)
	}
	if got := read(t, filepath.Join(wt, "a.txt")); got != "a\n" {
		t.Fatalf("the worktree's a.txt = %q", got)
	}
	write(t, filepath.Join(wt, "b.txt"), "b\n")
	if note := s.mergeBack(ctx, ended(t, store.TaskSucceeded, wt)); note != "[its changes are merged into your working tree: b.txt]" {
		t.Fatalf("note %q", note)
	}
	if got := read(t, filepath.Join(dir, "b.txt")); got != "b\n" {
		t.Fatalf("b.txt = %q", got)
	}
	if refs := runGit(t, dir, "for-each-ref"); refs != "" {
		t.Fatalf("refs left: %s", refs)
	}
}

// TestConflictIsRetriedUntilResolved: a conflict keeps the child's work
// on its branch and every wait reports it again; once the parent took
// the child's version and deleted the branch, a wait merges nothing.
func TestConflictIsRetriedUntilResolved(t *testing.T) {
	dir := t.TempDir()
	runGit(t, dir, "init", "-q")
	write(t, filepath.Join(dir, "f.txt"), "one\n")
	runGit(t, dir, "add", ".")
	runGit(t, dir, "commit", "-qm", "init")
	s := parentIn(t, dir)
	ctx := context.Background()
	wt, err := s.childDir(ctx, "call-1")
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(wt, "f.txt"), "child\n")
	write(t, filepath.Join(dir, "f.txt"), "parent\n")
	child := ended(t, store.TaskSucceeded, wt)
	for range 2 {
		note := s.mergeBack(ctx, child)
		if !strings.HasPrefix(note, "[CONFLICT") || !strings.Contains(note, "in: f.txt.") {
			t.Fatalf("note %q", note)
		}
		if got := read(t, filepath.Join(dir, "f.txt")); got != "parent\n" {
			t.Fatalf("a conflict changed the parent's f.txt: %q", got)
		}
	}
	branch := BranchOf(s.worktreeKey("call-1"))
	if got := runGit(t, dir, "show", branch+":f.txt"); got != "child" {
		t.Fatalf("the kept branch has f.txt %q", got)
	}
	runGit(t, dir, "checkout", branch, "--", "f.txt")
	if note := s.mergeBack(ctx, child); note != "" {
		t.Fatalf("a wait after the parent took the child's version: %q", note)
	}
	if refs := runGit(t, dir, "for-each-ref", "refs/heads/agentfleet/"); refs != "" {
		t.Fatalf("the branch is left: %s", refs)
	}
}

// TestClosedChildIsNotMerged: a cancelled child's worktree stays, and the
// parent is told where.
func TestClosedChildIsNotMerged(t *testing.T) {
	dir := t.TempDir()
	runGit(t, dir, "init", "-q")
	s := parentIn(t, dir)
	ctx := context.Background()
	wt, err := s.childDir(ctx, "call-1")
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(wt, "half.txt"), "half\n")
	if note := s.mergeBack(ctx, ended(t, store.TaskCancelled, wt)); !strings.Contains(note, "not merged") || !strings.Contains(note, wt) {
		t.Fatalf("note %q", note)
	}
	if _, err := os.Stat(filepath.Join(dir, "half.txt")); !os.IsNotExist(err) {
		t.Fatalf("a closed child's file reached the parent: %v", err)
	}
	if got := read(t, filepath.Join(wt, "half.txt")); got != "half\n" {
		t.Fatalf("the worktree lost the child's file: %q", got)
	}
}

// TestNotGitOrNotTopShares: a directory that is no git repository, or a
// subdirectory of one, is shared with the child.
func TestNotGitOrNotTopShares(t *testing.T) {
	plain := t.TempDir()
	if dir, err := parentIn(t, plain).childDir(context.Background(), "c"); err != nil || dir != plain {
		t.Fatalf("plain directory: %q, %v", dir, err)
	}
	repo := t.TempDir()
	runGit(t, repo, "init", "-q")
	sub := filepath.Join(repo, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if dir, err := parentIn(t, sub).childDir(context.Background(), "c"); err != nil || dir != sub {
		t.Fatalf("subdirectory of a repository: %q, %v", dir, err)
	}
}

// TestWorktreeWithoutGitIsNotSilentlyDropped: files in a child's
// directory that is no longer a worktree (removed by hand while it ran)
// are reported, not taken for a merge done.
func TestWorktreeWithoutGitIsNotSilentlyDropped(t *testing.T) {
	dir := t.TempDir()
	runGit(t, dir, "init", "-q")
	s := parentIn(t, dir)
	ctx := context.Background()
	wt, err := s.childDir(ctx, "call-1")
	if err != nil {
		t.Fatal(err)
	}
	runGit(t, dir, "worktree", "remove", "--force", wt)
	runGit(t, dir, "branch", "-D", BranchOf(s.worktreeKey("call-1")))
	runGit(t, dir, "update-ref", "-d", "refs/agentfleet/base/"+s.worktreeKey("call-1"))
	write(t, filepath.Join(wt, "lost.txt"), "work\n")
	if note := s.mergeBack(ctx, ended(t, store.TaskSucceeded, wt)); !strings.Contains(note, "no longer a git worktree") {
		t.Fatalf("note %q", note)
	}
}

// TestFailedSpawnDropsItsWorktree: a spawn refused after its worktree was
// made (a working_dir that escapes) leaves no worktree or ref behind.
func TestFailedSpawnDropsItsWorktree(t *testing.T) {
	dir := t.TempDir()
	runGit(t, dir, "init", "-q")
	s := parentIn(t, dir)
	ctx := context.Background()
	wt, err := s.childDir(ctx, "call-1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.childSpec(agent.SpawnRequest{CallID: "call-1", WorkingDir: "../../etc"}, wt, ""); err == nil {
		t.Fatal("an escaping working_dir was accepted")
	}
	s.dropWorktree(ctx, s.worktreeKey("call-1"))
	if _, err := os.Stat(wt); !os.IsNotExist(err) {
		t.Fatalf("the worktree is left: %v", err)
	}
	if refs := runGit(t, dir, "for-each-ref"); refs != "" {
		t.Fatalf("refs left: %s", refs)
	}
}
