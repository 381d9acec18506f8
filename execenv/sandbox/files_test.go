package sandbox_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/execenv"
	"github.com/agentfleet/agentfleet/execenv/sandbox"
	"github.com/agentfleet/agentfleet/internal/testenv"
)

// plant makes a workspace next to a secret file and a secret directory,
// with links to both planted in the workspace.
func plant(t *testing.T) (ws, secret string) {
	t.Helper()
	parent := testenv.SearchableTempDir(t)
	ws, secret = filepath.Join(parent, "ws"), filepath.Join(parent, "secret.txt")
	secretDir := filepath.Join(parent, "secret-dir")
	for _, d := range []string{ws, secretDir} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(secret, []byte("provider key"), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{"link": secret, "dirlink": secretDir, "proclink": "/proc/self/root" + secret} {
		if err := os.Symlink(target, filepath.Join(ws, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Link(secret, filepath.Join(ws, "hard")); err != nil {
		t.Fatal(err)
	}
	return ws, secret
}

// File tools stay in the workspace: a planted symbolic link (to a file, a
// directory or through /proc), "..", /proc itself and a hard link are all
// refused, for reads and writes, and cat through the shell finds nothing
// (a hard link made outside is the same file: only the worker could plant
// one, since the sandbox cannot link across its mounts).
func TestFileToolsStayInTheWorkspace(t *testing.T) {
	ws, secret := plant(t)
	l := newLocal(t, ws, sandbox.Settings{})
	env := sandbox.Scope(l)
	ctx := context.Background()
	for _, p := range []string{"link", "dirlink/x", "proclink", "../secret.txt", "hard", "/proc/self/environ", "/proc/1/environ", "/proc/self/root" + secret} {
		if data, err := env.ReadFile(ctx, p); !errors.Is(err, execenv.ErrOutsideScope) {
			t.Errorf("read_file %s: %q, %v; want ErrOutsideScope", p, data, err)
		}
		if err := env.WriteFile(ctx, p, []byte("x")); !errors.Is(err, execenv.ErrOutsideScope) {
			t.Errorf("write_file %s: %v; want ErrOutsideScope", p, err)
		}
	}
	if data, _ := os.ReadFile(secret); string(data) != "provider key" {
		t.Fatalf("the secret was changed: %q", data)
	}
	// In the shell, the links lead to paths the sandbox does not have.
	for _, script := range []string{`cat link`, `cat dirlink/x`, `cat proclink`} {
		if out, code := sh(t, env, script); code == 0 || strings.Contains(out, "provider key") {
			t.Fatalf("%s followed a link out of the sandbox: exit %d: %s", script, code, out)
		}
	}
	if err := env.WriteFile(ctx, "sub/ok.txt", []byte("fine")); err != nil {
		t.Fatalf("writing in the workspace: %v", err)
	}
	if data, err := env.ReadFile(ctx, "sub/ok.txt"); err != nil || string(data) != "fine" {
		t.Fatalf("reading it back: %q, %v", data, err)
	}
}

// Without the path check, what is opened is still checked: the local
// environment refuses a descriptor that turns out to be outside (a link
// swapped in after a check), and writes never leave the workspace.
func TestOpenedFilesAreCheckedWhereTheyReallyAre(t *testing.T) {
	ws, secret := plant(t)
	l := newLocal(t, ws, sandbox.Settings{})
	ctx := context.Background()
	if data, err := l.ReadFile(ctx, "link"); !errors.Is(err, execenv.ErrOutsideScope) {
		t.Fatalf("read through a link: %q, %v", data, err)
	}
	if err := l.WriteFile(ctx, "dirlink/planted", []byte("x")); err == nil {
		t.Fatal("wrote through a link to a directory outside")
	}
	if err := l.WriteFile(ctx, "link", []byte("x")); err == nil {
		t.Fatal("wrote through a link to a file outside")
	}
	if err := l.Rename(ctx, "../secret.txt", "stolen"); !errors.Is(err, execenv.ErrOutsideScope) {
		t.Fatalf("renamed a file from outside: %v", err)
	}
	if data, _ := os.ReadFile(secret); string(data) != "provider key" {
		t.Fatalf("the secret was changed: %q", data)
	}
}

// Grep runs ripgrep inside the sandbox: even without Scope's path check,
// a search sees only what the sandbox has, and a directory it lacks fails
// with bubblewrap's reason.
func TestGrepRunsInTheSandbox(t *testing.T) {
	if _, err := exec.LookPath("rg"); err != nil {
		testenv.SkipOrFatal(t, "rg is not on PATH")
	}
	ws, secret := plant(t)
	l := newLocal(t, ws, sandbox.Settings{})
	if !l.UsesRipgrep() {
		t.Fatalf("rg at a system path is not used in the sandbox")
	}
	// The workspace's parent holds the secret on the host; in the sandbox
	// it holds only the workspace (where "hard" is the same file, which a
	// sandbox running as a uid of its own, a root worker's or a
	// subordinate one, cannot read: a file with another link is not given
	// to the task).
	hard := []string{"hard"}
	if _, _, err := sandbox.SubordinateRange(); os.Geteuid() == 0 || err == nil {
		hard = nil
	}
	res, err := l.Grep(context.Background(), execenv.GrepRequest{Pattern: "provider", Path: filepath.Dir(secret), Mode: execenv.GrepFilesWithMatches})
	if err != nil || slices.Contains(res.Files, "secret.txt") || len(res.Files) != len(hard) || len(hard) == 1 && res.Files[0] != "ws/hard" {
		t.Fatalf("grep of the workspace's parent: %+v, %v; want only the workspace's files", res, err)
	}
	if _, err := l.Grep(context.Background(), execenv.GrepRequest{Pattern: "x", Path: "/root"}); err == nil || !strings.Contains(err.Error(), "bwrap") {
		t.Fatalf("grep of a directory the sandbox lacks: %v; want bubblewrap's reason", err)
	}
	if err := os.WriteFile(filepath.Join(ws, "in.txt"), []byte("provider inside"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err = l.Grep(context.Background(), execenv.GrepRequest{Pattern: "provider", Mode: execenv.GrepFilesWithMatches})
	if err != nil || !slices.Equal(res.Files, append(hard, "in.txt")) {
		t.Fatalf("grep in the workspace: %+v, %v", res, err)
	}
}

// A sandboxed workspace outside any repository asks no git process (the
// environment refuses the parents' ".git" probes, so the answer must come
// from the worker's own look); inside one it may.
func TestSandboxedWorkspaceOutsideARepoStartsNoGit(t *testing.T) {
	ws := testenv.SearchableTempDir(t)
	env := sandbox.Scope(newLocal(t, ws, sandbox.Settings{}))
	ctx := context.Background()
	if execenv.MayBeGitRepo(ctx, env) {
		t.Error("MayBeGitRepo is true for a sandboxed workspace outside any repository")
	}
	if err := os.Mkdir(filepath.Join(ws, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if !execenv.MayBeGitRepo(ctx, env) {
		t.Error("MayBeGitRepo is false for a sandboxed workspace holding .git")
	}
}
