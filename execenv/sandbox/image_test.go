package sandbox_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/execenv"
	"github.com/agentfleet/agentfleet/execenv/sandbox"
	"github.com/agentfleet/agentfleet/internal/ociimage"
	"github.com/agentfleet/agentfleet/internal/ociimage/ociimagetest"
	"github.com/agentfleet/agentfleet/internal/testenv"
)

// busyboxRoot pulls a busybox image (plus a file at var/tmp/in-image)
// from a registry in process and returns it unpacked.
func busyboxRoot(t *testing.T) *ociimage.Image {
	t.Helper()
	reg := ociimagetest.NewRegistry(t)
	bb := ociimagetest.Busybox(t, "from the image")
	layers, err := bb.Layers()
	if err != nil {
		t.Fatal(err)
	}
	img := ociimagetest.Image(t, []string{"PATH=/bin"}, append(layers, ociimagetest.Layer(t,
		ociimagetest.File{Name: "var/tmp/in-image", Body: "beside the workspace\n"},
		ociimagetest.File{Name: "bin/setuid-prog", Body: "#!/bin/sh\nid -u\n", Mode: 0o4755}))...)
	ref, _ := reg.Push(t, "busybox:test", img)
	c, err := ociimage.New(ociimage.Config{Dir: filepath.Join(testenv.SearchableTempDir(t), "cache"), AllowPrivate: ociimagetest.Loopback})
	if err != nil {
		t.Fatal(err)
	}
	im, err := c.Acquire(context.Background(), ref, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(im.Release)
	return im
}

// A sandbox with an image sees the image's system, not the host's, and
// is confined as without one: its workspace writable, the root read-only,
// its own uid; the file tools and grep (without rg) keep working.
func TestImageIsTheSandboxRoot(t *testing.T) {
	im := busyboxRoot(t)
	ws := filepath.Join(testenv.SearchableTempDir(t), "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	l := newLocal(t, ws, sandbox.Settings{Image: im.Root, Env: im.Env})
	for script, want := range map[string]string{
		`cat /etc/marker`:                               "from the image",
		`busybox --help | head -1 | cut -c1-7`:          "BusyBox",
		`test -e /usr/bin/git || echo no git`:           "no git",
		`test -e /etc/passwd || echo no passwd`:         "no passwd",
		`echo made > f && cat f`:                        "made",
		`id -u`:                                         "1000",
		`/bin/setuid-prog; stat -c %a /bin/setuid-prog`: "1000\n755", // the setuid bit was not kept
		`echo x > $HOME/h && cat $HOME/h`:               "x",
		`pwd`:                                           ws,
	} {
		if out, code := sh(t, l, script); code != 0 || out != want {
			t.Errorf("%s: %q (exit %d), want %q", script, out, code, want)
		}
	}
	for _, script := range []string{`touch /etc/x`, `echo x > /bin/busybox`, `mkdir /etc/new`, `touch /var/tmp/x`} {
		if out, code := sh(t, l, script); code == 0 {
			t.Errorf("%s succeeded (%q): the image must be read-only", script, out)
		}
	}
	ctx := context.Background()
	if b, err := l.ReadFile(ctx, filepath.Join(ws, "f")); err != nil || string(b) != "made\n" {
		t.Errorf("read_file of the command's file: %q, %v", b, err)
	}
	res, err := l.Grep(ctx, execenv.GrepRequest{Pattern: "made"})
	if err != nil || len(res.Matches) != 1 {
		t.Errorf("grep in the workspace: %+v, %v", res, err)
	}
}

// A workspace beneath a directory the image has too (/var/tmp) is bound
// in, and the image's other files there stay visible.
func TestImageWorkspaceBeneathAnImageDirectory(t *testing.T) {
	im := busyboxRoot(t)
	ws, err := os.MkdirTemp("/var/tmp", "agentfleet-image-ws-") //nolint:usetesting // it must lie under /var/tmp, which the image has too
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(ws) })
	if err := os.Chmod(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	l := newLocal(t, ws, sandbox.Settings{Image: im.Root, Env: im.Env})
	out, code := sh(t, l, `cat /var/tmp/in-image; echo x > here; pwd; ls /`)
	if code != 0 || !strings.HasPrefix(out, "beside the workspace\n"+ws+"\n") {
		t.Fatalf("got %q (exit %d)", out, code)
	}
	if _, err := os.Stat(filepath.Join(ws, "here")); err != nil {
		t.Errorf("the command's file is not in the workspace: %v", err)
	}
}

func TestImageArgsBindEntriesAndMakeTheWayToTheWorkspace(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"etc", "usr/bin", "proc"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "etc", "marker"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("usr/bin", filepath.Join(root, "bin")); err != nil {
		t.Fatal(err)
	}
	p := sandbox.Policy{Workspace: "/etc/ws", WorkspaceFD: 3, Image: root}
	args, err := p.Command([]string{"/bin/bash", "-c", "true"})
	if err != nil {
		t.Fatal(err)
	}
	line := strings.Join(args, " ")
	for _, want := range []string{"--dir /etc", "--ro-bind " + filepath.Join(root, "etc/marker") + " /etc/marker",
		"--ro-bind " + filepath.Join(root, "usr") + " /usr", "--symlink usr/bin /bin"} {
		if !strings.Contains(line, want) {
			t.Errorf("the command line lacks %q: %s", want, line)
		}
	}
	for _, bad := range []string{"--ro-bind " + filepath.Join(root, "etc") + " /etc ", filepath.Join(root, "proc"), "--ro-bind /usr /usr"} {
		if strings.Contains(line+" ", bad) {
			t.Errorf("the command line has %q: %s", bad, line)
		}
	}
	if i := slices.Index(args, "--"); i < 0 || args[i+1] != "/bin/bash" {
		t.Errorf("an image without sh must keep the command as it is: %q", args)
	}
}
