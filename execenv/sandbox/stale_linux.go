package sandbox

import (
	"os"

	"golang.org/x/sys/unix"
)

// lockDir opens dir and holds an exclusive lock on it for as long as the
// returned file is open: a live sandbox's directory is locked, a killed
// worker's leftover is not (SweepStale).
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
