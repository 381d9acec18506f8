package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// cgroupRoot is where the cgroup v2 hierarchy is mounted.
const cgroupRoot = "/sys/fs/cgroup"

// workerLeaf is the child of the worker's cgroup it moves its own
// processes to, so that the worker's cgroup may hand controllers down to
// the tasks' children (cgroup v2's "no internal processes" rule).
const workerLeaf = "agentfleet-worker"

// cgroupParent is the worker's delegated cgroup: tasks' cgroups are its
// children.
type cgroupParent struct {
	dir string
	cpu bool // the cpu controller is there too (cpu.max)
}

// delegated finds, once per process, the cgroup v2 the worker may create
// children in with the pids and memory controllers: /sys/fs/cgroup is
// cgroup2, and the worker's own cgroup lets it write. The first call
// moves the worker's processes into a leaf child and enables the
// controllers for the children (what systemd's Delegate=yes and a
// Kubernetes pod's cgroup namespace allow). The error says why not.
var delegated = sync.OnceValues(findDelegated)

func findDelegated() (*cgroupParent, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(cgroupRoot, &st); err != nil || st.Type != unix.CGROUP2_SUPER_MAGIC {
		return nil, fmt.Errorf("%s is not a cgroup v2 hierarchy", cgroupRoot)
	}
	data, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil, err
	}
	var rel string
	for line := range strings.SplitSeq(string(data), "\n") {
		if r, ok := strings.CutPrefix(line, "0::"); ok {
			rel = r
		}
	}
	if rel == "" {
		return nil, errors.New("this process is in no cgroup v2 (no 0:: line in /proc/self/cgroup)")
	}
	dir := filepath.Join(cgroupRoot, filepath.Clean("/"+rel))
	if filepath.Base(dir) == workerLeaf { // a worker started again in its leaf
		dir = filepath.Dir(dir)
	}
	p := &cgroupParent{dir: dir}
	controllers := strings.Fields(readString(filepath.Join(dir, "cgroup.controllers")))
	has := func(c string) bool { return contains(controllers, c) }
	if !has("pids") || !has("memory") {
		return nil, fmt.Errorf("cgroup %s does not have the pids and memory controllers (it has %v): delegate them", dir, controllers)
	}
	p.cpu = has("cpu")
	if err := p.enable(); err != nil {
		return nil, fmt.Errorf("cgroup %s is not delegated to this worker: %w", dir, err)
	}
	return p, nil
}

// enable moves the worker into its leaf and turns the controllers on for
// the children.
func (p *cgroupParent) enable() error {
	want := []string{"pids", "memory"}
	if p.cpu {
		want = append(want, "cpu")
	}
	on := strings.Fields(readString(filepath.Join(p.dir, "cgroup.subtree_control")))
	var add []string
	for _, c := range want {
		if !contains(on, c) {
			add = append(add, "+"+c)
		}
	}
	if len(add) == 0 {
		return nil
	}
	leaf := filepath.Join(p.dir, workerLeaf)
	if err := os.Mkdir(leaf, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	for pid := range strings.FieldsSeq(readString(filepath.Join(p.dir, "cgroup.procs"))) {
		if err := os.WriteFile(filepath.Join(leaf, "cgroup.procs"), []byte(pid), 0); err != nil && !errors.Is(err, syscall.ESRCH) {
			return fmt.Errorf("moving process %s to %s: %w", pid, leaf, err)
		}
	}
	return os.WriteFile(filepath.Join(p.dir, "cgroup.subtree_control"), []byte(strings.Join(add, " ")), 0)
}

// taskCgroup is the cgroup of one environment's commands.
type taskCgroup struct {
	dir string
	fd  *os.File // the directory, for SysProcAttr.CgroupFD
}

// child creates a cgroup for one environment with l's bounds.
func (p *cgroupParent) child(l Limits) (*taskCgroup, error) {
	dir, err := os.MkdirTemp(p.dir, "task-")
	if err != nil {
		return nil, fmt.Errorf("sandbox: creating the task's cgroup: %w", err)
	}
	c := &taskCgroup{dir: dir}
	write := func(file, v string) error {
		if err := os.WriteFile(filepath.Join(dir, file), []byte(v), 0); err != nil {
			return fmt.Errorf("sandbox: setting %s of the task's cgroup to %s: %w", file, v, err)
		}
		return nil
	}
	var errs []error
	if l.Pids > 0 {
		errs = append(errs, write("pids.max", strconv.Itoa(l.Pids)))
	}
	if l.Memory > 0 {
		errs = append(errs, write("memory.max", strconv.FormatInt(l.Memory, 10)))
		if _, err := os.Stat(filepath.Join(dir, "memory.swap.max")); err == nil {
			errs = append(errs, write("memory.swap.max", "0"))
		}
	}
	if l.CPUs > 0 && p.cpu {
		const period = 100000
		errs = append(errs, write("cpu.max", fmt.Sprintf("%d %d", int(l.CPUs*period), period)))
	}
	if err := errors.Join(errs...); err != nil {
		c.remove()
		return nil, err
	}
	if c.fd, err = os.Open(dir); err != nil {
		c.remove()
		return nil, err
	}
	return c, nil
}

// counters are the cgroup's counts of refusals: forks refused at
// pids.max, and processes the OOM killer ended.
type counters struct{ pidsMax, oomKills int64 }

func (c *taskCgroup) counters() counters {
	return counters{pidsMax: eventCount(filepath.Join(c.dir, "pids.events"), "max"),
		oomKills: eventCount(filepath.Join(c.dir, "memory.events"), "oom_kill")}
}

// remove kills what is left in the cgroup and removes it; the kernel
// refuses to remove a cgroup until its last process is reaped, which
// takes a moment after cgroup.kill.
func (c *taskCgroup) remove() {
	if c.fd != nil {
		_ = c.fd.Close()
	}
	_ = os.WriteFile(filepath.Join(c.dir, "cgroup.kill"), []byte("1"), 0)
	for wait := time.Millisecond; wait < time.Second; wait *= 2 {
		if err := os.Remove(c.dir); err == nil || errors.Is(err, os.ErrNotExist) {
			return
		}
		time.Sleep(wait)
	}
}

// eventCount reads "key N" from a cgroup events file (0 when absent).
func eventCount(file, key string) int64 {
	for line := range strings.SplitSeq(readString(file), "\n") {
		if v, ok := strings.CutPrefix(line, key+" "); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	return 0
}

func readString(file string) string {
	data, _ := os.ReadFile(file)
	return strings.TrimSpace(string(data))
}

func contains(list []string, s string) bool {
	return slices.Contains(list, s)
}

// LimitsEnforcement returns the delegated cgroup v2 the environments'
// limits are children of, or why there is none (they are then resource
// limits set with prlimit). The first call may move the worker into a
// leaf of its cgroup (see delegated).
func LimitsEnforcement() (string, error) {
	p, err := delegated()
	if err != nil {
		return "", err
	}
	return p.dir, nil
}
