package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// A root worker starts bubblewrap as a task's uid, and bubblewrap
// resolves every path it binds by name as that uid: a workspace under a
// directory only root may search (/root, a 0700 temporary directory), a
// toolchain or cache under /root, or the worker's own executable there
// would be out of its reach. So, where the worker may make mount
// namespaces (root with CAP_SYS_ADMIN), each such source gets a portal:
// an empty directory or file in the environment's own directory, which
// the uid can reach, on which the source is bind-mounted in a mount
// namespace of the thread that starts bwrap, and of bwrap only (the
// host's mounts are not touched). The workspace's source is the
// directory as opened (/proc/self/fd/N), so what is bound is what was
// opened, with no name resolved at all.

// portal is one source and the path bwrap binds in its place.
type portal struct {
	source string // a host path, or /proc/self/fd/N
	path   string // in the environment's directory
	idmap  bool   // seen through the portals' idmap (shared writable paths)
}

// portals are an environment's portals.
type portals struct {
	dir  string // the environment's portal directory
	list []portal
	// idmap, when set, is a user namespace whose uid and gid shared (the
	// range's, IDs.Shared) are the task's: a shared writable path (a build
	// cache every task writes) is attached through an idmapped mount of
	// it, where what the shared uid owns on disk is the task's and what
	// the task writes is stored as the shared uid's, so that tasks of
	// different uids share it (and a set-uid file one plants there is the
	// shared uid's, not root's). nil where the kernel or the file system
	// cannot idmap: such paths are bound as they are.
	idmap *os.File
}

// newIdmap makes the user namespace of portals.idmap, where shared is
// uid: a child made in it, whose maps Go writes, is held until its
// namespace is opened.
func newIdmap(shared, uid int) (*os.File, error) {
	cmd := exec.Command("cat")
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: shared, HostID: uid, Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: shared, HostID: uid, Size: 1}}}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("sandbox: a user namespace for idmapped mounts: %w", err)
	}
	ns, err := os.Open(fmt.Sprintf("/proc/%d/ns/user", cmd.Process.Pid))
	_ = stdin.Close()
	_ = cmd.Wait()
	return ns, err
}

// idmapWorks reports whether path can be attached idmapped through ns.
func idmapWorks(path string, ns *os.File) bool {
	fd, err := unix.OpenTree(unix.AT_FDCWD, path, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC)
	if err != nil {
		return false
	}
	defer func() { _ = unix.Close(fd) }()
	return setIdmap(fd, ns) == nil
}

func setIdmap(treeFD int, ns *os.File) error {
	return unix.MountSetattr(treeFD, "", unix.AT_EMPTY_PATH,
		&unix.MountAttr{Attr_set: unix.MOUNT_ATTR_IDMAP, Userns_fd: uint64(ns.Fd())})
}

// add gives source a portal (a directory or file, like source) and
// returns its path.
func (p *portals) add(source string, isDir bool) (string, error) {
	path := filepath.Join(p.dir, strconv.Itoa(len(p.list)))
	var err error
	if isDir {
		err = os.Mkdir(path, 0o700)
	} else {
		var f *os.File
		if f, err = os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_RDONLY, 0o400); err == nil {
			err = f.Close()
		}
	}
	if err != nil {
		return "", fmt.Errorf("sandbox: making a portal for %s: %w", source, err)
	}
	p.list = append(p.list, portal{source: source, path: path})
	return path, nil
}

// start starts cmd from a thread of its own in a mount namespace of its
// own where every portal has its source bound on it: the program started
// there (bwrap) inherits that namespace. The thread lives until the
// program exits, since bwrap's --die-with-parent is the death of the
// thread that started it; it is never given back to the Go runtime,
// which ends it with the goroutine.
func (p *portals) start(cmd *exec.Cmd) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // not unlocked: the thread dies with this goroutine
		err := p.mountAndStart(cmd.Start)
		errc <- err
		if err == nil {
			waitExit(cmd.Process.Pid)
		}
	}()
	return <-errc
}

// waitExit blocks until the process pid has exited, leaving it to be
// reaped by its exec.Cmd.
func waitExit(pid int) {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err != unix.EINTR {
			return
		}
	}
}

// mountAndStart clones each source's mount tree while still in the
// worker's mount namespace (a mount of another namespace cannot be bound
// once in a new one; a detached clone can be attached anywhere), enters
// a private one, attaches the clones on the portals and starts.
func (p *portals) mountAndStart(startCmd func() error) error {
	trees := make([]int, 0, len(p.list))
	defer func() {
		for _, fd := range trees {
			_ = unix.Close(fd)
		}
	}()
	for _, pt := range p.list {
		flags := uint(unix.OPEN_TREE_CLONE | unix.OPEN_TREE_CLOEXEC | unix.AT_RECURSIVE)
		if pt.idmap {
			flags &^= unix.AT_RECURSIVE // the idmap is set on the one mount
		}
		fd, err := unix.OpenTree(unix.AT_FDCWD, pt.source, flags)
		if err != nil {
			return fmt.Errorf("sandbox: cloning the mount of %s for its portal: %w", pt.source, err)
		}
		trees = append(trees, fd)
		if pt.idmap {
			if err := setIdmap(fd, p.idmap); err != nil {
				return fmt.Errorf("sandbox: idmapping %s for its portal: %w", pt.source, err)
			}
		}
	}
	if err := enterPrivateMounts(); err != nil {
		return err
	}
	for i, pt := range p.list {
		if err := unix.MoveMount(trees[i], "", unix.AT_FDCWD, pt.path, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
			return fmt.Errorf("sandbox: binding %s on its portal %s: %w", pt.source, pt.path, err)
		}
	}
	return startCmd()
}

// enterPrivateMounts gives the calling (locked) thread a mount namespace
// of its own whose mounts propagate nowhere.
func enterPrivateMounts() error {
	if err := unix.Unshare(unix.CLONE_NEWNS | unix.CLONE_FS); err != nil {
		return fmt.Errorf("sandbox: a mount namespace for the portals: %w", err)
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("sandbox: making the portals' mounts private: %w", err)
	}
	return nil
}

// portalsWork reports, once per process, whether this worker may make
// the portals' mount namespaces (root with CAP_SYS_ADMIN, and a kernel
// with open_tree and move_mount: Linux 5.2 and later). Without them
// a root worker binds sources by name, and each must be reachable by
// the task's uid (reachableBy).
var portalsWork = sync.OnceValue(func() bool {
	if !isRoot() {
		return false
	}
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // not unlocked: the thread dies with this goroutine
		fd, err := unix.OpenTree(unix.AT_FDCWD, "/", unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC)
		if err == nil {
			_ = unix.Close(fd)
			err = enterPrivateMounts()
		}
		errc <- err
	}()
	return <-errc == nil
})
