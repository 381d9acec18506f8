package execenv

import (
	"bytes"
	"context"
	"io"
	"io/fs"
	"os"
	"path"
	"sort"

	"github.com/pkg/sftp"
)

// ReadFile reads a remote file over SFTP.
func (s *SSH) ReadFile(ctx context.Context, p string) ([]byte, error) {
	var data []byte
	err := s.files(ctx, func(c *sshConn) error {
		f, err := c.sftp.Open(s.resolve(p))
		if err != nil {
			return err
		}
		defer func() { _ = f.Close() }()
		var buf bytes.Buffer
		if _, err := f.WriteTo(&buf); err != nil {
			return err
		}
		data = buf.Bytes()
		return nil
	})
	return data, err
}

// OpenFile streams a remote file. The reader uses the connection current
// at the call; it is not retried if the connection breaks while reading.
func (s *SSH) OpenFile(ctx context.Context, p string) (ReadCloser, error) {
	var f *sftp.File
	err := s.files(ctx, func(c *sshConn) error {
		var err error
		f, err = c.sftp.Open(s.resolve(p))
		return err
	})
	if err != nil {
		return nil, err
	}
	return f, nil
}

// WriteFile replaces a remote file, creating parent directories.
func (s *SSH) WriteFile(ctx context.Context, p string, data []byte) error {
	abs := s.resolve(p)
	return s.files(ctx, func(c *sshConn) error {
		if err := c.sftp.MkdirAll(path.Dir(abs)); err != nil {
			return err
		}
		f, err := c.sftp.OpenFile(abs, os.O_WRONLY|os.O_CREATE|os.O_TRUNC)
		if err != nil {
			return err
		}
		if _, err := f.ReadFrom(bytes.NewReader(data)); err != nil {
			_ = f.Close()
			return err
		}
		return f.Close()
	})
}

// Stat describes a remote path (following symlinks).
func (s *SSH) Stat(ctx context.Context, p string) (FileInfo, error) {
	abs := s.resolve(p)
	var fi FileInfo
	err := s.files(ctx, func(c *sshConn) error {
		st, err := c.sftp.Stat(abs)
		if err != nil {
			return &fs.PathError{Op: "stat", Path: abs, Err: err}
		}
		fi = FileInfo{Path: abs, IsDir: st.IsDir(), Size: st.Size(), ModTime: st.ModTime()}
		return nil
	})
	return fi, err
}

// Exists reports whether a remote path exists.
func (s *SSH) Exists(ctx context.Context, p string) (bool, error) {
	return existsVia(s.Stat(ctx, p))
}

// List lists a remote directory down to depth levels.
func (s *SSH) List(ctx context.Context, dir string, depth int) ([]DirEntry, error) {
	var out []DirEntry
	err := s.files(ctx, func(c *sshConn) error {
		var err error
		out, err = listTree(ctx, sftpWalkFS{c.sftp}, s.resolve(dir), depth)
		return err
	})
	return out, err
}

// Remove deletes a remote file or empty directory.
func (s *SSH) Remove(ctx context.Context, p string) error {
	return s.files(ctx, func(c *sshConn) error { return c.sftp.Remove(s.resolve(p)) })
}

// Rename moves a remote file (posix-rename, replacing the destination),
// creating the destination's parents.
func (s *SSH) Rename(ctx context.Context, from, to string) error {
	dst := s.resolve(to)
	return s.files(ctx, func(c *sshConn) error {
		if err := c.sftp.MkdirAll(path.Dir(dst)); err != nil {
			return err
		}
		return c.sftp.PosixRename(s.resolve(from), dst)
	})
}

// files runs a file operation after initialization, honouring ctx.
func (s *SSH) files(ctx context.Context, fn func(c *sshConn) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := s.ensureInit(ctx); err != nil {
		return err
	}
	return s.withConn(ctx, fn)
}

// sftpWalkFS walks a remote tree over SFTP.
type sftpWalkFS struct{ c *sftp.Client }

func (f sftpWalkFS) ReadDir(dir string) ([]fs.DirEntry, error) {
	infos, err := f.c.ReadDir(dir)
	if err != nil {
		return nil, &fs.PathError{Op: "readdir", Path: dir, Err: err}
	}
	out := make([]fs.DirEntry, len(infos))
	for i, fi := range infos {
		out[i] = fs.FileInfoToDirEntry(fi)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
	return out, nil
}

func (f sftpWalkFS) Open(name string) (io.ReadCloser, error) { return f.c.Open(name) }
func (sftpWalkFS) Join(dir, name string) string              { return path.Join(dir, name) }
