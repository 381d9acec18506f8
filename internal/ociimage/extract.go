package ociimage

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"

	"github.com/klauspost/compress/zstd"
)

// Whiteout names (the OCI image layer specification).
const (
	whiteoutPrefix = ".wh."
	opaqueWhiteout = ".wh..wh..opq"
)

// entryOverhead is what each entry is counted on top of its bytes: an
// inode and a directory entry.
const entryOverhead = 512

// decompress returns the tar stream of a layer blob: gzip and zstd are
// recognised by their magic numbers, anything else is taken as a tar.
func decompress(r io.Reader) (io.ReadCloser, error) {
	br := bufio.NewReader(r)
	magic, _ := br.Peek(4)
	switch {
	case bytes.HasPrefix(magic, []byte{0x1f, 0x8b}):
		return gzip.NewReader(br)
	case bytes.HasPrefix(magic, []byte{0x28, 0xb5, 0x2f, 0xfd}):
		d, err := zstd.NewReader(br)
		if err != nil {
			return nil, err
		}
		return d.IOReadCloser(), nil
	}
	return io.NopCloser(br), nil
}

// errTooLarge stops a layer that would make the image larger than the
// bound: checked as it is written, so a layer that decompresses to far
// more than its size never fills the disk.
var errTooLarge = errors.New("the image is larger than the cache's bound")

// applyLayer applies the layer read from r (compressed or not) to the
// tree of root (see "Unpacking" in the package doc) and returns the bytes
// it added, counted as entryOverhead per entry plus each file's size; it
// stops with errTooLarge once they would exceed limit.
func applyLayer(root *os.Root, r io.Reader, limit int64) (int64, error) {
	tr, err := decompress(r)
	if err != nil {
		return 0, fmt.Errorf("reading the layer: %w", err)
	}
	defer func() { _ = tr.Close() }()
	a := applier{root: root, added: map[string]bool{}, limit: limit}
	t := tar.NewReader(tr)
	for {
		hdr, err := t.Next()
		if errors.Is(err, io.EOF) {
			return a.size, nil
		}
		if err != nil {
			return a.size, fmt.Errorf("reading the layer: %w", err)
		}
		if err := a.apply(hdr, t); err != nil {
			return a.size, fmt.Errorf("layer entry %q: %w", hdr.Name, err)
		}
	}
}

// applier applies one layer's entries.
type applier struct {
	root  *os.Root
	added map[string]bool // names this layer wrote: an opaque whiteout keeps them
	size  int64
	limit int64
}

// cleanName is name relative to the root ("." for the root itself), or
// an error for an absolute name or one with a ".." component.
func cleanName(name string) (string, error) {
	if strings.HasPrefix(name, "/") {
		return "", errors.New("an absolute name: layers name files relative to the root")
	}
	for part := range strings.SplitSeq(name, "/") {
		if part == ".." {
			return "", errors.New("a \"..\" component: a layer may not name files outside its root")
		}
	}
	return path.Clean(name), nil
}

func (a *applier) apply(hdr *tar.Header, body io.Reader) error {
	name, err := cleanName(hdr.Name)
	if err != nil {
		return err
	}
	dir, base := path.Split(name)
	dir = path.Clean(dir)
	if name == "." {
		return nil // the root's own entry: its mode is ours
	}
	if err := a.parents(dir); err != nil {
		return err
	}
	switch {
	case base == opaqueWhiteout:
		return a.opaque(dir)
	case strings.HasPrefix(base, whiteoutPrefix):
		return a.root.RemoveAll(path.Join(dir, strings.TrimPrefix(base, whiteoutPrefix)))
	}
	a.added[name] = true
	if a.size += entryOverhead; a.size > a.limit {
		return errTooLarge
	}
	switch hdr.Typeflag {
	case tar.TypeDir:
		return a.dir(name, hdr.FileInfo().Mode())
	case tar.TypeReg: // the reader reports the old TypeRegA as TypeReg
		return a.file(name, hdr, body)
	case tar.TypeSymlink:
		if err := a.replace(name); err != nil {
			return err
		}
		return a.root.Symlink(hdr.Linkname, name)
	case tar.TypeLink:
		return a.link(name, hdr.Linkname)
	}
	return nil // devices, FIFOs and the rest are not honoured
}

// parents makes sure every directory of dir exists as a directory, not
// a link, making the missing ones.
func (a *applier) parents(dir string) error {
	if dir == "." {
		return nil
	}
	cur := ""
	for part := range strings.SplitSeq(dir, "/") {
		cur = path.Join(cur, part)
		fi, err := a.root.Lstat(cur)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			if err := a.root.Mkdir(cur, 0o755); err != nil {
				return err
			}
		case err != nil:
			return err
		case fi.Mode()&fs.ModeSymlink != 0:
			return fmt.Errorf("its directory %s is a symbolic link, which unpacking never follows", cur)
		case !fi.IsDir():
			return fmt.Errorf("its directory %s is not a directory", cur)
		}
	}
	return nil
}

// opaque removes what lower layers put in dir.
func (a *applier) opaque(dir string) error {
	d, err := a.root.Open(dir)
	if err != nil {
		return err
	}
	names, err := d.Readdirnames(-1)
	_ = d.Close()
	if err != nil {
		return err
	}
	for _, n := range names {
		if p := path.Join(dir, n); !a.added[p] {
			if err := a.root.RemoveAll(p); err != nil {
				return err
			}
		}
	}
	return nil
}

// replace removes what is at name, if anything.
func (a *applier) replace(name string) error {
	if _, err := a.root.Lstat(name); errors.Is(err, fs.ErrNotExist) {
		return nil
	} else if err != nil {
		return err
	}
	return a.root.RemoveAll(name)
}

// perm is mode's permission bits with setuid and setgid cleared (the
// sticky bit is kept).
func perm(mode fs.FileMode) fs.FileMode {
	return mode & (fs.ModePerm | fs.ModeSticky)
}

func (a *applier) dir(name string, mode fs.FileMode) error {
	fi, err := a.root.Lstat(name)
	if err == nil && !fi.IsDir() {
		if err := a.root.RemoveAll(name); err != nil {
			return err
		}
		err = fs.ErrNotExist
	}
	if errors.Is(err, fs.ErrNotExist) {
		if err := a.root.Mkdir(name, 0o700); err != nil {
			return err
		}
	} else if err != nil {
		return err
	}
	return a.root.Chmod(name, perm(mode)|0o700)
}

func (a *applier) file(name string, hdr *tar.Header, body io.Reader) error {
	if err := a.replace(name); err != nil {
		return err
	}
	f, err := a.root.OpenFile(name, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	n, err := io.Copy(f, io.LimitReader(body, a.limit-a.size+1))
	a.size += n
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && a.size > a.limit {
		err = errTooLarge
	}
	if err != nil {
		return err
	}
	return a.root.Chmod(name, perm(hdr.FileInfo().Mode()))
}

// link makes name a hard link to target, a regular file of the root.
func (a *applier) link(name, target string) error {
	t, err := cleanName(target)
	if err != nil {
		return fmt.Errorf("hard link target %q: %w", target, err)
	}
	if err := a.parents(path.Dir(t)); err != nil {
		return fmt.Errorf("hard link target %q: %w", target, err)
	}
	fi, err := a.root.Lstat(t)
	if err != nil {
		return fmt.Errorf("hard link target %q: %w", target, err)
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("hard link target %q is not a regular file", target)
	}
	if t == name {
		return nil
	}
	if err := a.replace(name); err != nil {
		return err
	}
	return a.root.Link(t, name)
}
