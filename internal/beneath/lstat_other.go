//go:build !unix

package beneath

import (
	"os"
	"path/filepath"
)

// lstat on systems without fstatat goes by dir's path (see openDir there).
func lstat(dir *os.File, name string) (os.FileMode, error) {
	fi, err := os.Lstat(filepath.Join(dir.Name(), name))
	if err != nil {
		return 0, err
	}
	return fi.Mode(), nil
}
