//go:build unix && !linux

package beneath

import "os"

func openDir(dir *os.File, rel string, create bool, perm os.FileMode) (*os.File, error) {
	return walk(dir, rel, create, perm)
}
