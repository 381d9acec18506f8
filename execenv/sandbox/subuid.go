package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"strconv"
	"strings"
	"sync"

	"github.com/agentfleet/agentfleet/execenv/sandbox/egress"
)

// Subordinate uids: a worker that is not root runs each task tree as a
// uid of its own from the subordinate uid range /etc/subuid gives its
// user (see "Users" in the package doc).

// subRange is one entry of /etc/subuid: count ids from first.
type subRange struct{ first, count int }

// parseSubIDs finds, in the content of /etc/subuid (or /etc/subgid), the
// first range of at least two ids of the user named name or numbered id.
func parseSubIDs(content, name string, id int) (subRange, bool) {
	for line := range strings.SplitSeq(content, "\n") {
		f := strings.Split(strings.TrimSpace(line), ":")
		if len(f) != 3 || f[0] != name && f[0] != strconv.Itoa(id) {
			continue
		}
		first, err1 := strconv.Atoi(f[1])
		count, err2 := strconv.Atoi(f[2])
		if err1 == nil && err2 == nil && first > 0 && count >= 2 && first+count-1 < 1<<31-1 {
			return subRange{first, count}, true
		}
	}
	return subRange{}, false
}

// subordinate is what a worker that is not root needs to give its task
// trees uids of their own.
type subordinate struct {
	first, last int    // the uid range (/etc/subuid)
	newuidmap   string // the setuid helpers of package uidmap
	newgidmap   string
	nsenter     string // util-linux's
}

// subordinateIDs finds, once per process, the subordinate uid range of
// this process's user and newuidmap and newgidmap; the error says what is
// missing. A root worker has none (it sets uids itself).
var subordinateIDs = sync.OnceValues(findSubordinate)

func findSubordinate() (*subordinate, error) {
	if isRoot() {
		return nil, errors.New("the worker is root: it gives its tasks uids of sandbox_uid_range itself")
	}
	uid := os.Getuid()
	name := strconv.Itoa(uid)
	if u, err := user.LookupId(name); err == nil {
		name = u.Username
	}
	data, err := os.ReadFile("/etc/subuid")
	if err != nil {
		return nil, fmt.Errorf("no subordinate uids: %w (give the worker's user a range: usermod --add-subuids 100000-165535 %s)", err, name)
	}
	r, ok := parseSubIDs(string(data), name, uid)
	if !ok {
		return nil, fmt.Errorf("no subordinate uids: /etc/subuid has no range of 2 or more for %s (usermod --add-subuids 100000-165535 %s)", name, name)
	}
	s := &subordinate{first: r.first, last: r.first + r.count - 1}
	if s.newuidmap, err = exec.LookPath("newuidmap"); err == nil {
		s.newgidmap, err = exec.LookPath("newgidmap")
	}
	if err != nil {
		return nil, errors.New("newuidmap or newgidmap is not on PATH: install them (Debian: apt-get install uidmap) to give each task a uid of its own")
	}
	if s.nsenter, err = exec.LookPath("nsenter"); err != nil {
		return nil, errors.New("nsenter is not on PATH: install util-linux to give each task a uid of its own")
	}
	return s, nil
}

// SubordinateRange is the first and last uid of the subordinate range a
// worker that is not root gives its task trees (one uid each, as IDs
// hands them out; its first is kept back, as IDs does), or why this
// worker runs its tasks as its own uid instead: it is root, its user has
// no range in /etc/subuid, or newuidmap is missing.
func SubordinateRange() (first, last int, err error) {
	s, err := subordinateIDs()
	if err != nil {
		return 0, 0, err
	}
	return s.first, s.last, nil
}

// inside reports whether every uid a hands out is in [first, last].
func (a *IDs) inside(first, last int) bool { return a.first-1 >= first && a.last <= last }

// defaultSubIDs gives a uid of the subordinate range to each sandbox of a
// worker that is not root whose Settings name no IDs (or IDs outside the
// range).
var defaultSubIDs = sync.OnceValue(func() *IDs {
	s, _ := subordinateIDs()
	return NewIDs(s.first, s.last)
})

// mapLine reads a line from the helper of newUserns.
func mapLine(r *bufio.Reader) string {
	line, _ := r.ReadString('\n')
	return strings.TrimSpace(line)
}

// give makes path (not following a link) the commands': a root worker
// gives it to their uid; with subordinate uids, a path the worker owns
// gets mode (the worker's group may then write it, and so may the
// commands, whose gid is that group). Otherwise nothing changes.
func (l *Local) give(path string, mode os.FileMode) error {
	if l.sub != nil {
		fi, err := os.Lstat(path)
		if err != nil || fi.Mode()&os.ModeSymlink != 0 || !ownedByWorker(fi) {
			return err
		}
		return os.Chmod(path, mode)
	}
	return l.chown(path)
}

// giveFile is give for a file the file tools opened: with subordinate
// uids, mode 0664 and the task's uid when the worker owns it.
func (l *Local) giveFile(f *os.File) error {
	switch {
	case l.sub != nil:
		if fi, err := f.Stat(); err != nil || !ownedByWorker(fi) {
			return err
		}
		if err := f.Chmod(0o664); err != nil {
			return err
		}
		return l.handOverFile(f)
	case l.uid >= 0:
		return f.Chown(l.uid, l.uid)
	}
	return nil
}

// ns is the environment's user namespace (subordinate uids), made once.
func (l *Local) ns() (*taskUserns, error) {
	l.nsOnce.Do(func() { l.userns, l.nsErr = newUserns(l.sub, l.subUID) })
	return l.userns, l.nsErr
}

// handOver gives paths, names only the worker controls, to the task's
// subordinate uid (with the worker's group); nothing without them.
func (l *Local) handOver(paths ...string) error {
	if l.sub == nil {
		return nil
	}
	ns, err := l.ns()
	if err != nil {
		return err
	}
	var files []*os.File
	defer func() {
		for _, f := range files {
			_ = f.Close()
		}
	}()
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		files = append(files, f)
	}
	return ns.chownFiles(files)
}

// handOverFile is handOver for an open file, when the worker owns it.
func (l *Local) handOverFile(f *os.File) error {
	if l.sub == nil {
		return nil
	}
	if fi, err := f.Stat(); err != nil || !ownedByWorker(fi) {
		return err
	}
	ns, err := l.ns()
	if err != nil {
		return err
	}
	return ns.chownFile(f)
}

// othersMayRun reports whether the egress forwarder (this program) may be
// read and run by any uid: bwrap, started by the worker, binds it by
// name, so only the file's own mode matters to the task's uid.
func othersMayRun() bool {
	exe, err := egress.Executable()
	if err != nil {
		return false
	}
	fi, err := os.Stat(exe)
	return err == nil && fi.Mode().Perm()&0o005 == 0o005
}
