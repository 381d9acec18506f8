package sandbox_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentfleet/agentfleet/execenv/sandbox"
	"github.com/agentfleet/agentfleet/internal/testenv"
)

// TestReadOnlyFDBindsWhatWasOpened: a directory bound by descriptor
// (Policy.ReadOnlyFDs) is readable and not writable inside, and is the
// directory that was opened even after its name became a link to another
// one.
func TestReadOnlyFDBindsWhatWasOpened(t *testing.T) {
	if err := sandbox.Available(); err != nil {
		testenv.SkipOrFatal(t, err.Error())
	}
	root := testenv.SearchableTempDir(t)
	opened, elsewhere := filepath.Join(root, "git"), filepath.Join(root, "elsewhere")
	for dir, mark := range map[string]string{opened: "opened", elsewhere: "elsewhere"} {
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "mark"), []byte(mark+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.Open(opened)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	// The name is swapped for a link to another directory after the open.
	if err := os.Rename(opened, opened+".moved"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, opened); err != nil {
		t.Fatal(err)
	}
	at := filepath.Join(root, "seen", ".git")
	p := sandbox.Policy{Workspace: testenv.SearchableTempDir(t), ReadOnlyFDs: []sandbox.BoundFD{{FD: 3, At: at}}}
	argv, err := p.Command([]string{"sh", "-c", `cat "$0/mark"; touch "$0/hooks" 2>&1 || echo refused`, at})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.ExtraFiles = []*os.File{f}
	out, err := cmd.CombinedOutput()
	got := string(out)
	if err != nil || !strings.HasPrefix(got, "opened\n") || !strings.Contains(got, "Read-only file system") || !strings.Contains(got, "refused") {
		t.Fatalf("want the opened directory, read-only; got %q, %v", got, err)
	}
	if _, err := os.Stat(filepath.Join(opened+".moved", "hooks")); !os.IsNotExist(err) {
		t.Errorf("the sandbox wrote the bound directory: %v", err)
	}
}

// TestReadOnlyDirsMustBeOpenedAndAbsolute: Settings with a directory
// that was not opened, or a relative place, are refused.
func TestReadOnlyDirsMustBeOpenedAndAbsolute(t *testing.T) {
	f, err := os.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	for _, d := range []sandbox.OpenedDir{{At: "/x"}, {File: f, At: "rel"}} {
		if err := sandbox.CheckSettings(sandbox.Settings{ReadOnlyDirs: []sandbox.OpenedDir{d}}); err == nil {
			t.Errorf("%+v was accepted", d)
		}
	}
}
