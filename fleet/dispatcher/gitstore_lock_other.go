//go:build !unix

package dispatcher

import (
	"os"
	"path/filepath"
)

// openLockFile opens (making it) the lock file name in the directory d.
func openLockFile(d *os.File, name string) (*os.File, error) {
	return os.OpenFile(filepath.Join(d.Name(), name), os.O_RDWR|os.O_CREATE, 0o600)
}

// lockFile takes no lock where flock(2) is not available: a removal is
// then only its rename (see gitstore_lease.go).
func lockFile(*os.File, bool) error { return nil }
