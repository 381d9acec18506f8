package search

import (
	"io"
	"io/fs"
	"os"
	"path"
)

// FS is the little a directory walk needs, so the pure-Go search and
// listing run over the local disk and over SFTP alike. Paths are absolute
// with '/' separators.
type FS interface {
	ReadDir(dir string) ([]fs.DirEntry, error)
	Open(name string) (io.ReadCloser, error)
	Join(dir, name string) string
}

// OS is the local disk.
type OS struct{}

func (OS) ReadDir(dir string) ([]fs.DirEntry, error) { return os.ReadDir(dir) }
func (OS) Open(name string) (io.ReadCloser, error)   { return os.Open(name) }
func (OS) Join(dir, name string) string              { return path.Join(dir, name) }

// readAllLimited reads at most limit bytes of a file through fsys.
func readAllLimited(fsys FS, name string, limit int64) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	return io.ReadAll(io.LimitReader(f, limit))
}
