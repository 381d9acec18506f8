//go:build unix

package dispatcher

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// openLockFile opens (making it) the lock file name in the directory d,
// not following a link.
func openLockFile(d *os.File, name string) (*os.File, error) {
	fd, err := unix.Openat(int(d.Fd()), name, unix.O_RDWR|unix.O_CREAT|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, &os.PathError{Op: "openat", Path: name, Err: err}
	}
	return os.NewFile(uintptr(fd), name), nil
}

// lockFile takes f's flock: shared, waiting for it; or exclusive, not
// waiting (errLockBusy).
func lockFile(f *os.File, exclusive bool) error {
	how := unix.LOCK_SH
	if exclusive {
		how = unix.LOCK_EX | unix.LOCK_NB
	}
	for {
		err := unix.Flock(int(f.Fd()), how)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.EWOULDBLOCK):
			return errLockBusy
		}
		return &os.PathError{Op: "flock", Path: f.Name(), Err: err}
	}
}
