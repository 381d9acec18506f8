package sandbox

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// workerInnerID is the worker's uid inside a task's user namespace
// (newUserns).
const workerInnerID = InnerID + 1

// taskUserns is the user namespace of an environment whose commands run
// as a subordinate uid (fd), and a second one (admin) where the worker is
// root and the task's uid is mapped too: entered by nsenter, a chown
// there gives what the worker makes for the task (the home, /tmp and
// workspace directories, what the file tools write) to the task's uid,
// as a root worker's chown does.
type taskUserns struct {
	fd, admin *os.File
	nsenter   string
	sub       *subordinate
	uid       int // the task's, outside
}

// adminUID is outside uid u (the worker's subordinate range) as the admin
// namespace maps it: the whole range from 1.
func (ns *taskUserns) adminUID(u int) int { return u - ns.sub.first + 1 }

// ours reports whether a file of uid u is the worker's to give the task:
// the worker's own, or of its range (a uid the tree had before, when
// all its environments had ended and the uid went back).
func (ns *taskUserns) ours(u int) bool {
	return u == os.Getuid() || u >= ns.sub.first && u <= ns.sub.last && u != ns.uid
}

// newUserns makes the user namespace a task's bubblewrap joins (--userns)
// when the worker is not root: InnerID inside is uid outside (one of
// the worker's subordinate uids, mapped by newuidmap) with gid the
// worker's own primary group (newgidmap maps a user's own gid, and
// then denies setgroups). The worker's uid is mapped too, as
// workerInnerID: bubblewrap takes the task's uid before it binds
// anything, keeping its capabilities in the namespace, which override
// permissions only on files whose owner is mapped there; so it reaches
// the worker's directories (the private home and /tmp, in a directory
// only the worker may search) by that mapping. (Mapped as root,
// bubblewrap fails to set up its mounts.) Nothing inside becomes the
// worker: the task has no capability (CAP_SETUID) and no set-uid
// program works (no_new_privs). Its user.max_user_namespaces is 0:
// nothing inside makes a user namespace (bwrap's --disable-userns
// cannot be combined with --userns; the seccomp filter refuses it too).
func newUserns(s *subordinate, uid int) (*taskUserns, error) {
	in, worker, gid := strconv.Itoa(InnerID), strconv.Itoa(os.Getuid()), strconv.Itoa(os.Getgid())
	fd, err := makeUserns(s, uid, []string{in, strconv.Itoa(uid), "1", strconv.Itoa(workerInnerID), worker, "1"}, []string{in, gid, "1"})
	if err != nil {
		return nil, err
	}
	admin, err := makeUserns(s, uid, []string{"0", worker, "1", "1", strconv.Itoa(s.first), strconv.Itoa(s.last - s.first + 1)}, []string{in, gid, "1"})
	if err != nil {
		_ = fd.Close()
		return nil, err
	}
	return &taskUserns{fd: fd, admin: admin, nsenter: s.nsenter, sub: s, uid: uid}, nil
}

// makeUserns makes a user namespace with these maps (newuidmap's and
// newgidmap's arguments after the pid) and user.max_user_namespaces 0.
// A shell started in it with CAP_SYS_RESOURCE there (every capability
// its creator has in it) kept across exec sets the sysctl, says so and
// waits until the maps are written and the namespace opened.
func makeUserns(s *subordinate, uid int, uids, gids []string) (*os.File, error) {
	cmd := exec.Command("/bin/sh", "-c", `echo 0 >/proc/sys/user/max_user_namespaces && echo ready && exec cat >/dev/null`)
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER, AmbientCaps: []uintptr{unix.CAP_SYS_RESOURCE}}
	cmd.Env, cmd.Dir = []string{"PATH=/usr/bin:/bin"}, "/"
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("sandbox: a user namespace for the task's uid %d: %w", uid, err)
	}
	defer func() { _ = stdin.Close(); _ = cmd.Wait() }()
	if line := mapLine(bufio.NewReader(out)); line != "ready" {
		return nil, fmt.Errorf("sandbox: a user namespace for the task's uid %d: setting its user.max_user_namespaces to 0 failed: %s", uid, strings.TrimSpace(stderr.String()))
	}
	pid := strconv.Itoa(cmd.Process.Pid)
	for _, m := range [][]string{append([]string{s.newuidmap, pid}, uids...), append([]string{s.newgidmap, pid}, gids...)} {
		if msg, err := exec.Command(m[0], m[1:]...).CombinedOutput(); err != nil {
			return nil, fmt.Errorf("sandbox: %s for the task's uid %d: %v: %s (is the uid in this user's /etc/subuid range?)",
				m[0], uid, err, strings.TrimSpace(string(msg)))
		}
	}
	ns, err := os.Open("/proc/" + pid + "/ns/user")
	if err != nil {
		return nil, fmt.Errorf("sandbox: opening the task's user namespace: %w", err)
	}
	return ns, nil
}

// chownFile gives an open file to the task's uid and the worker's group.
func (ns *taskUserns) chownFile(f *os.File) error { return ns.chownFiles([]*os.File{f}) }

// chownFiles gives open files to the task's uid and the worker's group:
// chown, entered by nsenter into the admin namespace (where the worker is
// root, so its capabilities last across exec), changes each file as
// opened (/proc/self/fd/N), whatever became of its name.
func (ns *taskUserns) chownFiles(files []*os.File) error {
	owner := strconv.Itoa(ns.adminUID(ns.uid)) + ":" + strconv.Itoa(InnerID)
	args := []string{"--user=/proc/self/fd/3", "--preserve-credentials", "--", "chown", owner}
	for i := range files {
		args = append(args, "/proc/self/fd/"+strconv.Itoa(4+i))
	}
	cmd := exec.Command(ns.nsenter, args...)
	cmd.ExtraFiles, cmd.Env, cmd.Dir = append([]*os.File{ns.admin}, files...), []string{"PATH=/usr/bin:/bin"}, "/"
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("sandbox: giving %s to the task's uid: %v: %s", files[0].Name(), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// chownTree gives dir (an open directory) and what is ours beneath it,
// but for symbolic links and files with other hard links (see chownTree
// of platform_linux.go), to the task's uid: walked through an os.Root,
// so nothing outside dir is reached, and changed as opened, a batch of
// files per chown. Best effort: a file chown cannot change (a group
// other than the worker's, unmapped) stays as it is.
func (ns *taskUserns) chownTree(dir *os.File) error {
	root, err := os.OpenRoot(fdPath(dir))
	if err != nil {
		return err
	}
	defer func() { _ = root.Close() }()
	var batch []*os.File
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		err := ns.chownFiles(batch)
		for _, f := range batch {
			_ = f.Close()
		}
		batch = batch[:0]
		return err
	}
	err = fs.WalkDir(root.FS(), ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.Type()&fs.ModeSymlink != 0 {
			return nil //nolint:nilerr // gone, unreadable or a link: left as it is
		}
		fi, err := d.Info()
		if err != nil {
			return nil //nolint:nilerr // gone
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok || !ns.ours(int(st.Uid)) || !d.IsDir() && links(fi) > 1 {
			return nil // not the worker's to give
		}
		f, err := root.Open(path) // inside dir, whatever path is now
		if err != nil {
			return nil //nolint:nilerr // one the worker cannot open stays its own
		}
		if batch = append(batch, f); len(batch) == 200 {
			_ = flush()
		}
		return nil
	})
	_ = flush() // best effort, as chownTree of a root worker skips what it cannot give
	return err
}

// close closes the namespaces.
func (ns *taskUserns) close() {
	_ = ns.fd.Close()
	_ = ns.admin.Close()
}

// ownedByWorker reports whether this process's uid owns fi.
func ownedByWorker(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}

// groupTree makes dir (an open directory) and everything beneath it that
// the worker owns writable by the worker's group (g+rw, g+x where u+x),
// never following a link: the task's commands run as a subordinate uid
// with that group. A file with more than one hard link is left as it is
// (another name may reach it, as chownTree says).
func groupTree(dir *os.File) error {
	root, err := os.OpenRoot(fdPath(dir))
	if err != nil {
		return err
	}
	defer func() { _ = root.Close() }()
	return fs.WalkDir(root.FS(), ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
				return nil // removed while we walked, or a task's private directory
			}
			return err
		}
		if d.Type()&fs.ModeSymlink != 0 {
			return nil
		}
		fi, err := d.Info()
		if err != nil || !ownedByWorker(fi) || !d.IsDir() && links(fi) > 1 {
			return nil //nolint:nilerr // gone, or not the worker's to change
		}
		mode := fi.Mode().Perm() | 0o060 | (fi.Mode().Perm()&0o100)>>3
		if mode == fi.Mode().Perm() {
			return nil
		}
		if err := root.Chmod(path, mode); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	})
}

// handBack makes what the task's uid owns in its workspace, home and
// /tmp writable by the worker's group, so that the worker can remove
// them (a Go module cache is read-only; a task may chmod 0700): a chmod
// run as the task's uid, in its namespace, the last command of the
// environment. Best effort: what it cannot change stays (the worker
// logs the removal that fails).
func (l *Local) handBack() {
	if l.Local == nil || l.dirLock == nil {
		return
	}
	p := Policy{Home: filepath.Join(l.tmpDir, "home"), Tmp: filepath.Join(l.tmpDir, "tmp"), Workspace: l.WorkingDir()}
	w, err := l.wrap(p, []string{"chmod", "-R", "u+rwX,g+rwX", "--", Home, "/tmp", p.Workspace})
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, w.Argv[0], w.Argv[1:]...)
	cmd.Env, cmd.Dir, cmd.ExtraFiles = w.Env, w.Dir, w.Files
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if w.Attr != nil {
		w.Attr(cmd.SysProcAttr)
	}
	if w.Start != nil { // kills the sandbox when bwrap ends (innerKiller)
		err = w.Start(cmd)
	} else {
		err = cmd.Start()
	}
	if w.Release != nil {
		w.Release()
	}
	if err == nil {
		_ = cmd.Wait()
	}
}

// innerKiller stops a command's sandbox when its bwrap ends, where
// bwrap's --die-with-parent cannot: bwrap started by a worker that is not
// root takes the task's uid in the sandbox (--userns), and the kernel
// clears the parent-death signal of a process whose uid changes. So the
// sandbox's first process (pid 1 of its PID namespace: when it dies,
// everything of the sandbox does) would outlive a bwrap killed at a
// timeout. bwrap writes that process's pid to w (--info-fd); start
// starts the command and a goroutine that opens a pidfd of it, waits
// for bwrap to end, and kills it. A worker that is itself killed
// (SIGKILL) leaves a running command's sandbox behind: a gap.
type innerKiller struct {
	r, w    *os.File
	started bool
}

func newInnerKiller() (*innerKiller, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	return &innerKiller{r: r, w: w}, nil
}

// start is Wrapped.Start.
func (k *innerKiller) start(cmd *exec.Cmd) error {
	if err := cmd.Start(); err != nil {
		return err
	}
	k.started = true
	go killInnerAfter(k.r, cmd.Process.Pid)
	return nil
}

// release is Wrapped.Release: once started (or not), the worker's end
// of the pipe is closed, so that the goroutine reads EOF if bwrap ends
// before it says anything.
func (k *innerKiller) release() {
	_ = k.w.Close()
	if !k.started {
		_ = k.r.Close()
	}
}

func killInnerAfter(r *os.File, outer int) {
	defer func() { _ = r.Close() }()
	var info struct {
		ChildPid int `json:"child-pid"`
	}
	if err := json.NewDecoder(r).Decode(&info); err != nil || info.ChildPid <= 0 {
		return // bwrap failed before starting the sandbox
	}
	inner, err := unix.PidfdOpen(info.ChildPid, 0)
	if err != nil {
		return // already gone
	}
	defer func() { _ = unix.Close(inner) }()
	if fd, err := unix.PidfdOpen(outer, 0); err == nil {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		for {
			if _, err := unix.Poll(fds, -1); err != unix.EINTR {
				break
			}
		}
		_ = unix.Close(fd)
	}
	_ = unix.PidfdSendSignal(inner, unix.SIGKILL, nil, 0)
}
