package execenv

import (
	"io"
	"io/fs"
	"os"
	"path"
)

// walkFS is the little a directory walk needs, so the pure-Go search and
// listing run over the local disk and over SFTP alike. Paths are absolute
// with '/' separators.
type walkFS interface {
	readDir(dir string) ([]fs.DirEntry, error)
	open(name string) (io.ReadCloser, error)
	join(dir, name string) string
}

// osWalkFS is the local disk.
type osWalkFS struct{}

func (osWalkFS) readDir(dir string) ([]fs.DirEntry, error) { return os.ReadDir(dir) }
func (osWalkFS) open(name string) (io.ReadCloser, error)   { return os.Open(name) }
func (osWalkFS) join(dir, name string) string              { return path.Join(dir, name) }

// readAllLimited reads at most limit bytes of a file through fsys.
func readAllLimited(fsys walkFS, name string, limit int64) ([]byte, error) {
	f, err := fsys.open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, limit))
}
