//go:build unix

package beneath

import (
	"os"

	"golang.org/x/sys/unix"
)

// lstat asks the kernel about name relative to dir's descriptor, so that
// nothing swapped into dir's path since it was opened is followed.
func lstat(dir *os.File, name string) (os.FileMode, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(int(dir.Fd()), name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return 0, &os.PathError{Op: "lstat", Path: name, Err: err}
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		return os.FileMode(st.Mode & 0o777), nil
	case unix.S_IFDIR:
		return os.ModeDir | os.FileMode(st.Mode&0o777), nil
	case unix.S_IFLNK:
		return os.ModeSymlink | os.FileMode(st.Mode&0o777), nil
	}
	return os.ModeIrregular | os.FileMode(st.Mode&0o777), nil
}
