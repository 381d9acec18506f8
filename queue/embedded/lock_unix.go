//go:build unix

package embedded

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// lockName is the advisory lock file in the data directory.
const lockName = "agentfleet.lock"

// lockDir takes an exclusive advisory lock on dir, failing at once if another process has it.
// The lock is released when the file is closed, including when the process dies.
func lockDir(dir string) (*os.File, error) {
	path := filepath.Join(dir, lockName)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o640)
	if err != nil {
		return nil, fmt.Errorf("embedded: open lock file %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		_ = f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("embedded: data dir %s is in use by another process (a running `agentfleet-dev dev`?): stop it or choose another data dir", dir)
		}
		return nil, fmt.Errorf("embedded: lock data dir %s: %w", dir, err)
	}
	return f, nil
}

func unlockDir(f *os.File) error {
	// Closing the descriptor releases the flock.
	return f.Close()
}
