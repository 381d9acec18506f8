package sandbox

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/agentfleet/agentfleet/execenv/sandbox/egress"
	"github.com/agentfleet/agentfleet/internal/beneath"
)

// isRoot reports whether the worker runs as root: its sandboxes then run
// as uids of their own (see IDs), never as root.
func isRoot() bool { return os.Geteuid() == 0 }

// asUser returns the process attributes of a bwrap started as uid (gid
// the same, no supplementary groups) and, when cgroupFD >= 0, in that
// cgroup. uid < 0 keeps the worker's.
func asUser(uid, cgroupFD int) func(*syscall.SysProcAttr) {
	return func(a *syscall.SysProcAttr) {
		if uid >= 0 {
			a.Credential = &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid), Groups: []uint32{}}
		}
		if cgroupFD >= 0 {
			a.UseCgroupFD, a.CgroupFD = true, cgroupFD
		}
	}
}

// probeAs makes cmd run as uid when the worker is root (Available).
func probeAs(cmd *exec.Cmd, uid int) {
	if isRoot() {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
		asUser(uid, -1)(cmd.SysProcAttr)
	}
}

// openWorkspace opens dir without following a link in its last
// component (the components above are the operator's).
func openWorkspace(dir string) (*os.File, error) {
	return beneath.OpenDir(filepath.Dir(dir), filepath.Base(dir))
}

// chownTree gives dir (an open directory) and everything beneath it to
// uid, never following a link: os.Root keeps the walk inside dir, and
// Lchown changes a link itself. A file with more than one hard link is
// left as it is: another name, outside the workspace (a local clone's
// objects), may reach it, and its owner could make it writable.
func chownTree(dir *os.File, uid int) error {
	root, err := os.OpenRoot(fdPath(dir))
	if err != nil {
		return err
	}
	defer func() { _ = root.Close() }()
	return fs.WalkDir(root.FS(), ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // removed while we walked
			}
			return err
		}
		if !d.IsDir() {
			if fi, err := d.Info(); err == nil && links(fi) > 1 {
				return nil
			}
		}
		if err := root.Lchown(path, uid, uid); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	})
}

// fdPath is the /proc name of an open file, which reaches what was
// opened whatever became of its name.
func fdPath(f *os.File) string { return fmt.Sprintf("/proc/self/fd/%d", f.Fd()) }

// prlimitPath is util-linux's prlimit, looked up once.
var prlimitPath = sync.OnceValues(func() (string, error) {
	p, err := exec.LookPath("prlimit")
	if err != nil {
		return "", errors.New("sandbox: prlimit is not on PATH, and the task's limits need it where there is no delegated cgroup v2: install util-linux")
	}
	return p, nil
})

// rlimitArgs is the prlimit command that starts bwrap with l's resource
// limits: RLIMIT_NPROC for Pids and RLIMIT_DATA for Memory when cg is
// false (no cgroup), RLIMIT_CPU for CPUTime always. RLIMIT_NPROC counts
// every process of the uid: a root worker's tasks have a uid of their own
// (a tree shares it), and a worker that is not root adds what its user
// runs now (userTasks), so the bound is Pids more than that. nil when no
// limit applies.
func rlimitArgs(l Limits, cg bool, root bool) ([]string, error) {
	var args []string
	if !cg && l.Pids > 0 {
		n := l.Pids
		if !root {
			n += userTasks(os.Getuid())
		}
		args = append(args, "--nproc="+capped(unix.RLIMIT_NPROC, uint64(n)))
	}
	if !cg && l.Memory > 0 {
		args = append(args, "--data="+capped(syscall.RLIMIT_DATA, uint64(l.Memory)))
	}
	if l.CPUTime > 0 {
		args = append(args, "--cpu="+capped(syscall.RLIMIT_CPU, uint64(l.CPUTime.Seconds())))
	}
	if len(args) == 0 {
		return nil, nil
	}
	p, err := prlimitPath()
	if err != nil {
		return nil, err
	}
	return append(append([]string{p}, args...), "--"), nil
}

// capped is v, or the current hard limit of resource when that is lower
// (an unprivileged process cannot raise it), as prlimit's SOFT:HARD.
func capped(resource int, v uint64) string {
	var cur syscall.Rlimit
	if err := syscall.Getrlimit(resource, &cur); err == nil && cur.Max < v {
		v = cur.Max
	}
	s := strconv.FormatUint(v, 10)
	return s + ":" + s
}

// userTasks counts the processes and threads of uid (RLIMIT_NPROC counts
// threads too), from /proc; 0 when /proc cannot be read.
func userTasks(uid int) int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		data, err := os.ReadFile("/proc/" + e.Name() + "/status")
		if err != nil {
			continue
		}
		var real, threads int
		for line := range strings.SplitSeq(string(data), "\n") {
			if v, ok := strings.CutPrefix(line, "Uid:"); ok {
				if f := strings.Fields(v); len(f) > 0 {
					real, _ = strconv.Atoi(f[0])
				}
			} else if v, ok := strings.CutPrefix(line, "Threads:"); ok {
				threads, _ = strconv.Atoi(strings.TrimSpace(v))
			}
		}
		if real == uid {
			n += max(threads, 1)
		}
	}
	return n
}

// reachableBy reports the first directory on the way to path (links
// resolved) that uid cannot search: bubblewrap, started as uid, resolves
// every path it binds by name. uid < 0 (the worker's own) is not
// checked.
func reachableBy(path string, uid int) error {
	if uid < 0 {
		return nil
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return err
	}
	for dir := real; ; dir = filepath.Dir(dir) {
		fi, err := os.Stat(dir)
		if err != nil {
			return err
		}
		if fi.IsDir() && !permits(fi, uid, 0o1) {
			return fmt.Errorf("sandbox: %s is not searchable by the sandbox's uid %d, so bubblewrap cannot bind %s: make it mode 0755 or 0711 (the workspace root, TMPDIR)", dir, uid, path)
		}
		if dir == "/" {
			return nil
		}
	}
}

// permits reports whether uid (with gid uid and no other group) has bit
// (1 search, 4 read) on fi.
func permits(fi fs.FileInfo, uid int, bit fs.FileMode) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	mode := fi.Mode().Perm()
	switch {
	case !ok:
		return true
	case int(st.Uid) == uid:
		return mode&(bit<<6) != 0
	case int(st.Gid) == uid:
		return mode&(bit<<3) != 0
	}
	return mode&bit != 0
}

// forwarderFor is the egress forwarder's executable that uid can reach:
// this program, or, when uid cannot read it where it is (a worker not
// readable by others, or
// binary under /root, a test binary in a private build directory), a
// hard link to it (or a copy, across file systems) in dir, the
// environment's own directory.
func forwarderFor(uid int, dir string) (string, error) {
	exe, err := egress.Executable()
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(exe)
	readable := err == nil && permits(fi, uid, 0o4)
	if uid < 0 || readable && reachableBy(filepath.Dir(exe), uid) == nil {
		return exe, nil
	}
	dst := filepath.Join(dir, "forwarder")
	if readable && os.Link(exe, dst) == nil {
		return dst, nil
	}
	src, err := os.Open(exe)
	if err != nil {
		return "", fmt.Errorf("sandbox: copying the egress forwarder: %w", err)
	}
	defer func() { _ = src.Close() }()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o555)
	if err == nil {
		_, err = io.Copy(out, src)
		if cerr := out.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return "", fmt.Errorf("sandbox: copying the egress forwarder: %w", err)
	}
	return dst, nil
}
