//go:build !unix

package beneath

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// openDir on systems without openat checks each component with Lstat,
// then opens the whole path: a link swapped in between the two is not
// caught (no agentfleet sandbox runs here; see the package doc).
func openDir(dir *os.File, rel string, create bool, perm os.FileMode) (*os.File, error) {
	cur := dir.Name()
	for _, name := range strings.Split(rel, "/") {
		cur = filepath.Join(cur, name)
		fi, err := os.Lstat(cur)
		if os.IsNotExist(err) && create {
			if err := os.Mkdir(cur, perm); err != nil && !os.IsExist(err) {
				return nil, err
			}
			fi, err = os.Lstat(cur)
		}
		if err != nil {
			return nil, err
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			return nil, ErrSymlink
		}
		if !fi.IsDir() {
			return nil, fmt.Errorf("%s is not a directory", cur)
		}
	}
	return os.Open(cur)
}
