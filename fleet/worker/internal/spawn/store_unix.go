//go:build unix

package spawn

import (
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// readGitFile reads and removes .git/name: a plain file with one link,
// never a symbolic link.
func (ws Workspace) readGitFile(name string) ([]byte, error) {
	d, err := ws.gitDir()
	if err != nil {
		return nil, err
	}
	defer func() { _ = d.Close() }()
	fd, err := unix.Openat(int(d.Fd()), name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("opening the bundle %s: %w", name, err)
	}
	f := os.NewFile(uintptr(fd), name)
	defer func() { _ = f.Close() }()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG || st.Nlink != 1 {
		return nil, fmt.Errorf("the bundle %s is not a plain file of its own (a link or a device): refused", name)
	}
	b, err := io.ReadAll(f)
	_ = unix.Unlinkat(int(d.Fd()), name, 0)
	return b, err
}

// writeGitFile writes .git/name afresh (a file of that name, or a link,
// is removed first), readable by the task's sandbox.
func (ws Workspace) writeGitFile(name string, data []byte) error {
	d, err := ws.gitDir()
	if err != nil {
		return err
	}
	defer func() { _ = d.Close() }()
	_ = unix.Unlinkat(int(d.Fd()), name, 0)
	fd, err := unix.Openat(int(d.Fd()), name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o644)
	if err != nil {
		return fmt.Errorf("writing the bundle %s: %w", name, err)
	}
	f := os.NewFile(uintptr(fd), name)
	if _, err := f.Write(data); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}
