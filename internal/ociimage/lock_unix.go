//go:build unix

package ociimage

import (
	"os"

	"golang.org/x/sys/unix"
)

// lockDir takes an exclusive lock on dir, held while the returned file
// is open; it fails at once when another holder has it.
func lockDir(dir string) (*os.File, error) {
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
