//go:build unix

package dirlock

import (
	"os"

	"golang.org/x/sys/unix"
)

// Lock opens dir and takes an exclusive lock on it, held while the
// returned file is open; it fails at once when another holder has it.
func Lock(dir string) (*os.File, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		_ = f.Close()
		return nil, err
	}
	return f, nil
}
