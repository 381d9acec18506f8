package beneath

import (
	"errors"
	"os"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// openat2Missing is set once openat2 was refused as unknown, so later
// calls go straight to the walk.
var openat2Missing atomic.Bool

// openDir opens rel (clean, relative, no ".." components) beneath dir:
// with openat2 when the kernel has it and create is false, by the walk
// otherwise.
func openDir(dir *os.File, rel string, create bool, perm os.FileMode) (*os.File, error) {
	if !create && !openat2Missing.Load() {
		fd, err := unix.Openat2(int(dir.Fd()), rel, &unix.OpenHow{
			Flags:   unix.O_RDONLY | unix.O_DIRECTORY | unix.O_CLOEXEC,
			Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
		})
		switch {
		case err == nil:
			return os.NewFile(uintptr(fd), dir.Name()+"/"+rel), nil
		case errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM):
			openat2Missing.Store(true)
		case errors.Is(err, unix.ELOOP):
			return nil, ErrSymlink
		case errors.Is(err, unix.EXDEV):
			return nil, ErrEscape
		default:
			return nil, &os.PathError{Op: "openat2", Path: rel, Err: err}
		}
	}
	return walk(dir, rel, create, perm)
}
