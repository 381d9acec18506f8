package execenv_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/execenv"
)

func TestReadOnlyRefusesChanges(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := execenv.ReadOnly(newLocal(t, execenv.LocalConfig{WorkingDir: dir}))
	ctx := testCtx(t)
	for name, err := range map[string]error{
		"WriteFile": env.WriteFile(ctx, "f.txt", []byte("y")),
		"Remove":    env.Remove(ctx, "f.txt"),
		"Rename":    env.Rename(ctx, "f.txt", "g.txt"),
	} {
		if !errors.Is(err, execenv.ErrReadOnly) || !strings.Contains(err.Error(), "f.txt") {
			t.Errorf("%s error = %v, want ErrReadOnly naming the path", name, err)
		}
	}
	if got, err := env.ReadFile(ctx, "f.txt"); err != nil || string(got) != "x" {
		t.Fatalf("ReadFile through ReadOnly = %q, %v", got, err)
	}
	if res, err := env.Exec(ctx, execenv.ExecRequest{Command: "echo ok"}); err != nil || res.Stdout != "ok\n" {
		t.Fatalf("Exec through ReadOnly = %+v, %v (commands are allowed)", res, err)
	}
}

func TestLoggingRecordsCommands(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	env := execenv.Logging(newLocal(t, execenv.LocalConfig{WorkingDir: t.TempDir()}), slog.New(slog.NewTextHandler(&buf, nil)))
	ctx := testCtx(t)
	if _, err := env.Exec(ctx, execenv.ExecRequest{Command: "exit 4"}); err != nil {
		t.Fatal(err)
	}
	if err := env.WriteFile(ctx, "a/b.txt", []byte("hello")); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{`command="exit 4"`, "exit_code=4", "duration=", "msg=write", "bytes=5", "path=a/b.txt"} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
}

// scopedFixture is a root with a file, an outside directory with a secret,
// and symlinks leading out of and within the root.
func scopedFixture(t *testing.T) (root, outside string) {
	t.Helper()
	base := t.TempDir()
	root, outside = filepath.Join(base, "root"), filepath.Join(base, "outside")
	for _, d := range []string{filepath.Join(root, "sub"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	must(t, os.WriteFile(filepath.Join(root, "sub", "in.txt"), []byte("in"), 0o644))
	must(t, os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("secret"), 0o644))
	must(t, os.Symlink(outside, filepath.Join(root, "escape")))
	must(t, os.Symlink(filepath.Join(outside, "new.txt"), filepath.Join(root, "dangling")))
	must(t, os.Symlink("sub", filepath.Join(root, "inside")))
	return root, outside
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func testScoped(t *testing.T, env execenv.Environment, outside string) {
	ctx := testCtx(t)
	refused := map[string]error{}
	_, refused["../../etc/passwd"] = env.ReadFile(ctx, "../../etc/passwd")
	_, refused["sub/../../outside/secret.txt"] = env.ReadFile(ctx, "sub/../../outside/secret.txt")
	_, refused["escape/secret.txt"] = env.ReadFile(ctx, "escape/secret.txt")
	refused["dangling"] = env.WriteFile(ctx, "dangling", []byte("x"))
	refused["escape/created.txt"] = env.WriteFile(ctx, "escape/created.txt", []byte("x"))
	_, refused["/etc"] = env.List(ctx, "/etc", 1)
	_, refused["escape (grep)"] = env.Grep(ctx, execenv.GrepRequest{Pattern: "secret", Path: "escape"})
	_, refused[".. (exec dir)"] = env.Exec(ctx, execenv.ExecRequest{Command: "true", Dir: ".."})
	refused["escape/x (rename)"] = env.Rename(ctx, "sub/in.txt", "escape/x")
	for name, err := range refused {
		if !errors.Is(err, execenv.ErrOutsideScope) {
			t.Errorf("%s: error = %v, want ErrOutsideScope", name, err)
			continue
		}
		if first := strings.Fields(name)[0]; !strings.Contains(err.Error(), first) {
			t.Errorf("%s: error %q does not name the path", name, err)
		}
	}
	for _, p := range []string{"new.txt", "created.txt"} {
		if _, err := os.Stat(filepath.Join(outside, p)); err == nil {
			t.Errorf("%s was created outside the root", p)
		}
	}
	if got, err := env.ReadFile(ctx, "inside/in.txt"); err != nil || string(got) != "in" {
		t.Fatalf("a symlink within the root must work: %q, %v", got, err)
	}
	if err := env.WriteFile(ctx, "sub/new/file.txt", []byte("ok")); err != nil {
		t.Fatalf("creating a new file inside the root: %v", err)
	}
	if res, err := env.Grep(ctx, execenv.GrepRequest{Pattern: "in"}); err != nil || len(res.Matches) == 0 {
		t.Fatalf("Grep inside the root: %+v, %v", res, err)
	}
}

func TestScopedLocal(t *testing.T) {
	t.Parallel()
	root, outside := scopedFixture(t)
	testScoped(t, execenv.Scoped(newLocal(t, execenv.LocalConfig{WorkingDir: root})), outside)
}

func TestScopedSSH(t *testing.T) {
	t.Parallel()
	srv := startSSH(t)
	root, outside := scopedFixture(t)
	testScoped(t, execenv.Scoped(newSSH(t, srv.Config(root))), outside)
}

// resolverCalls counts how Scoped resolves paths through a real Local.
type resolverCalls struct {
	*execenv.Local
	full, beneath int
}

func (r *resolverCalls) RealPath(ctx context.Context, p string) (string, error) {
	r.full++
	return r.Local.RealPath(ctx, p)
}

func (r *resolverCalls) RealPathBeneath(ctx context.Context, dir, rel string) (string, error) {
	r.beneath++
	return r.Local.RealPathBeneath(ctx, dir, rel)
}

// Scoped resolves its root once and a path written beneath it from there;
// a path written elsewhere is resolved whole. Both still refuse what leads
// out (testScoped).
func TestScopedResolvesFromItsRoot(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	root, _ := scopedFixture(t)
	env := &resolverCalls{Local: newLocal(t, execenv.LocalConfig{WorkingDir: root})}
	scoped := execenv.Scoped(env)
	for range 3 {
		if got, err := scoped.ReadFile(ctx, "inside/in.txt"); err != nil || string(got) != "in" {
			t.Fatalf("ReadFile through a link within the root: %q, %v", got, err)
		}
	}
	if _, err := scoped.ReadFile(ctx, "escape/secret.txt"); !errors.Is(err, execenv.ErrOutsideScope) {
		t.Fatalf("a link out of the root resolved from it: %v, want ErrOutsideScope", err)
	}
	if env.full != 1 || env.beneath != 4 {
		t.Fatalf("resolved %d paths whole and %d from the root; want 1 (the root) and 4", env.full, env.beneath)
	}
	if _, err := scoped.ReadFile(ctx, filepath.Join(filepath.Dir(root), "root", "..", "outside", "secret.txt")); !errors.Is(err, execenv.ErrOutsideScope) {
		t.Fatalf("a path outside the root: %v, want ErrOutsideScope", err)
	}
	if env.full != 2 {
		t.Fatalf("a path outside the root was not resolved whole (%d whole resolutions)", env.full)
	}
}

// RealPathBeneath a real directory gives what RealPath gives for the joined
// path, through links within, out of, dangling and absolute.
func TestRealPathBeneathAgreesWithRealPath(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	root, _ := scopedFixture(t)
	env := newLocal(t, execenv.LocalConfig{WorkingDir: root})
	real, err := env.RealPath(ctx, root)
	if err != nil {
		t.Fatal(err)
	}
	for _, rel := range []string{"sub/in.txt", "inside/in.txt", "escape/secret.txt", "dangling", "inside/../escape", "missing/a/b", "sub"} {
		want, err := env.RealPath(ctx, filepath.Join(root, rel))
		if err != nil {
			t.Fatal(err)
		}
		got, err := env.RealPathBeneath(ctx, real, rel)
		if err != nil || got != want {
			t.Errorf("RealPathBeneath(%q) = %q, %v; RealPath gives %q", rel, got, err, want)
		}
	}
}
