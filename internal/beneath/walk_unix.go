//go:build unix

package beneath

import (
	"errors"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// walk opens rel beneath dir one component at a time with O_NOFOLLOW,
// creating missing ones when create is set. A link in a component fails
// the open (ELOOP, or ENOTDIR where the link is opened as a file), so it
// is never followed.
func walk(dir *os.File, rel string, create bool, perm os.FileMode) (*os.File, error) {
	cur := int(dir.Fd())
	owned := -1
	defer func() {
		if owned >= 0 {
			_ = unix.Close(owned)
		}
	}()
	for name := range strings.SplitSeq(rel, "/") {
		fd, err := openComponent(cur, name, create, perm)
		if err != nil {
			return nil, err
		}
		if owned >= 0 {
			_ = unix.Close(owned)
		}
		owned, cur = fd, fd
	}
	f := os.NewFile(uintptr(owned), dir.Name()+"/"+rel)
	owned = -1
	return f, nil
}

// openComponent opens the directory name in dirfd without following a
// link, creating it first when create is set and it is missing.
func openComponent(dirfd int, name string, create bool, perm os.FileMode) (int, error) {
	const flags = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC
	for {
		fd, err := unix.Openat(dirfd, name, flags, 0)
		switch {
		case err == nil:
			return fd, nil
		case errors.Is(err, unix.ENOENT) && create:
			if err := unix.Mkdirat(dirfd, name, uint32(perm.Perm())); err != nil && !errors.Is(err, unix.EEXIST) {
				return -1, &os.PathError{Op: "mkdirat", Path: name, Err: err}
			}
			continue // open what is there now, link or not, by the same rule
		case errors.Is(err, unix.ELOOP), errors.Is(err, unix.ENOTDIR) && isLink(dirfd, name):
			return -1, ErrSymlink
		default:
			return -1, &os.PathError{Op: "openat", Path: name, Err: err}
		}
	}
}

func isLink(dirfd int, name string) bool {
	var st unix.Stat_t
	return unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK
}
