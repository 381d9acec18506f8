package ociimage

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/internal/ociimage/ociimagetest"
)

// apply applies layers (of ociimagetest.File) in order to a fresh root
// and returns its directory and the error of the first layer that failed.
func apply(t *testing.T, layers ...[]ociimagetest.File) (string, error) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "rootfs")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = root.Close() }()
	for _, files := range layers {
		rc, err := ociimagetest.Layer(t, files...).Compressed()
		if err != nil {
			t.Fatal(err)
		}
		_, err = applyLayer(root, rc, 1<<30)
		_ = rc.Close()
		if err != nil {
			return dir, err
		}
	}
	return dir, nil
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

func TestLayerNamesOutsideTheRootAreRefused(t *testing.T) {
	for _, f := range []ociimagetest.File{
		{Name: "../escaped", Body: "x"},
		{Name: "a/../../escaped", Body: "x"},
		{Name: "/abs", Body: "x"},
		{Name: "link", Type: tar.TypeLink, Link: "../escaped"},
	} {
		dir, err := apply(t, []ociimagetest.File{f})
		if err == nil {
			t.Errorf("%+v: unpacked, want it refused", f)
			continue
		}
		if exists(filepath.Join(filepath.Dir(dir), "escaped")) {
			t.Errorf("%+v: a file was written outside the root", f)
		}
	}
}

func TestSymlinksAreWrittenButNeverFollowed(t *testing.T) {
	outside := t.TempDir()
	dir, err := apply(t,
		[]ociimagetest.File{{Name: "etc", Type: tar.TypeSymlink, Link: outside}, {Name: "rel", Type: tar.TypeSymlink, Link: "../.."}},
		[]ociimagetest.File{{Name: "etc/passwd", Body: "root::0:0"}})
	if err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Fatalf("a file beneath a link: err %v, want it refused naming the link", err)
	}
	if target, err := os.Readlink(filepath.Join(dir, "etc")); err != nil || target != outside {
		t.Errorf("the link etc is %q, %v; want it written as it is", target, err)
	}
	if exists(filepath.Join(outside, "passwd")) {
		t.Error("unpacking followed a link out of the root")
	}
	// A hard link to a link is refused too: it would be the link's target.
	if _, err := apply(t, []ociimagetest.File{{Name: "l", Type: tar.TypeSymlink, Link: "/etc/shadow"},
		{Name: "h", Type: tar.TypeLink, Link: "l"}}); err == nil {
		t.Error("a hard link to a symbolic link was made")
	}
}

func TestSetuidBitsAndDevicesAreNotHonoured(t *testing.T) {
	dir, err := apply(t, []ociimagetest.File{
		{Name: "bin/su", Body: "x", Mode: 0o4755},
		{Name: "bin/wall", Body: "x", Mode: 0o2755},
		{Name: "tmp/", Type: tar.TypeDir, Mode: 0o1777},
		{Name: "dev/sda", Type: tar.TypeBlock},
		{Name: "dev/mem", Type: tar.TypeChar},
		{Name: "fifo", Type: tar.TypeFifo},
		{Name: "bin/su2", Type: tar.TypeLink, Link: "bin/su"},
	})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]fs.FileMode{"bin/su": 0o755, "bin/wall": 0o755, "bin/su2": 0o755} {
		fi, err := os.Lstat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode()&(fs.ModeSetuid|fs.ModeSetgid) != 0 || fi.Mode().Perm() != want {
			t.Errorf("%s has mode %v, want %v without setuid or setgid", name, fi.Mode(), want)
		}
	}
	if fi, err := os.Lstat(filepath.Join(dir, "tmp")); err != nil || fi.Mode()&fs.ModeSticky == 0 {
		t.Errorf("tmp lost its sticky bit: %v %v", fi, err)
	}
	for _, name := range []string{"dev/sda", "dev/mem", "fifo"} {
		if exists(filepath.Join(dir, name)) {
			t.Errorf("%s was made; devices and FIFOs are skipped", name)
		}
	}
}

func TestWhiteoutsRemoveWhatLowerLayersPut(t *testing.T) {
	dir, err := apply(t,
		[]ociimagetest.File{{Name: "a/x", Body: "1"}, {Name: "a/y", Body: "2"}, {Name: "d/old", Body: "3"}, {Name: "d/sub/deep", Body: "4"}, {Name: "gone/f", Body: "5"}},
		[]ociimagetest.File{{Name: "a/.wh.x"}, {Name: "d/new", Body: "6"}, {Name: "d/.wh..wh..opq"}, {Name: ".wh.gone"}})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]bool{"a/x": false, "a/y": true, "d/old": false, "d/sub": false, "d/new": true, "gone": false, "a/.wh.x": false, "d/.wh..wh..opq": false} {
		if got := exists(filepath.Join(dir, name)); got != want {
			t.Errorf("%s exists: %v, want %v", name, got, want)
		}
	}
}

func TestLaterLayersReplaceFilesAndLinks(t *testing.T) {
	dir, err := apply(t,
		[]ociimagetest.File{{Name: "f", Body: "old"}, {Name: "l", Type: tar.TypeSymlink, Link: "f"}},
		[]ociimagetest.File{{Name: "f", Body: "new"}, {Name: "l", Body: "now a file"}})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "f")); string(b) != "new" {
		t.Errorf("f holds %q, want the upper layer's", b)
	}
	if fi, err := os.Lstat(filepath.Join(dir, "l")); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("l is %v, %v; want a regular file", fi, err)
	}
}

func TestUncompressedLayersAreRead(t *testing.T) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	_ = tw.WriteHeader(&tar.Header{Name: "plain", Mode: 0o644, Size: 1, Typeflag: tar.TypeReg})
	_, _ = io.WriteString(tw, "p")
	_ = tw.Close()
	root, err := os.OpenRoot(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = root.Close() }()
	if _, err := applyLayer(root, bytes.NewReader(buf.Bytes()), 1<<30); err != nil {
		t.Fatal(err)
	}
	if _, err := root.Lstat("plain"); err != nil {
		t.Errorf("an uncompressed layer was not unpacked: %v", err)
	}
}

// A layer that decompresses to more than the bound stops as it is
// written: no more than the bound reaches the disk.
func TestALayerIsStoppedAtTheBound(t *testing.T) {
	dir := t.TempDir()
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = root.Close() }()
	rc, err := ociimagetest.Layer(t, ociimagetest.File{Name: "bomb", Body: strings.Repeat("0", 1<<20)}).Compressed()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = rc.Close() }()
	if _, err := applyLayer(root, rc, 64<<10); !errors.Is(err, errTooLarge) {
		t.Fatalf("err %v, want errTooLarge", err)
	}
	if fi, err := os.Stat(filepath.Join(dir, "bomb")); err == nil && fi.Size() > 64<<10+1 {
		t.Errorf("%d bytes were written past a bound of %d", fi.Size(), 64<<10)
	}
}
