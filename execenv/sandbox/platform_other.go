//go:build !linux

package sandbox

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// Bubblewrap runs on Linux only (Available says so elsewhere); these
// keep the package building for the worker's other platforms.

var errNotLinux = errors.New("sandbox: bubblewrap runs on Linux only")

func isRoot() bool                                        { return false }
func asUser(uid, cgroupFD int) func(*syscall.SysProcAttr) { return nil }
func probeAs(cmd *exec.Cmd, uid int)                      {}
func openWorkspace(dir string) (*os.File, error)          { return os.Open(dir) }
func chownTree(dir *os.File, uid int) error               { return nil }
func fdPath(f *os.File) string                            { return f.Name() }
func seccompFile() (*os.File, error)                      { return nil, errNotLinux }

func rlimitArgs(l Limits, cg bool, root bool) ([]string, error) { return nil, nil }

// Seccomp is the sandbox's seccomp filter: none off Linux.
func Seccomp() ([]byte, error) { return nil, errNotLinux }

type counters struct{ pidsMax, oomKills int64 }

type taskCgroup struct{ fd *os.File }

func (c *taskCgroup) counters() counters { return counters{} }
func (c *taskCgroup) remove()            {}

type cgroupParent struct{}

func (p *cgroupParent) child(Limits) (*taskCgroup, error) { return nil, errNotLinux }

func delegated() (*cgroupParent, error) { return nil, errNotLinux }

func reachableBy(path string, uid int) error { return nil }

func forwarderFor(uid int, dir string) (string, error) { return "", nil }

// LimitsEnforcement says there are no limits off Linux.
func LimitsEnforcement() (string, error) { return "", errNotLinux }

type portal struct {
	source, path string
	idmap        bool
}

type portals struct {
	dir   string
	list  []portal
	idmap *os.File
}

func newIdmap(shared, uid int) (*os.File, error) { return nil, errNotLinux }
func idmapWorks(path string, ns *os.File) bool   { return false }

func (p *portals) add(source string, isDir bool) (string, error) { return "", errNotLinux }
func (p *portals) start(cmd *exec.Cmd) error                     { return errNotLinux }
func portalsWork() bool                                          { return false }

type taskUserns struct{ fd *os.File }

func newUserns(s *subordinate, uid int) (*taskUserns, error) { return nil, errNotLinux }
func (ns *taskUserns) chownFile(f *os.File) error            { return errNotLinux }
func (ns *taskUserns) chownFiles(f []*os.File) error         { return errNotLinux }
func (ns *taskUserns) close()                                {}
func (ns *taskUserns) chownTree(dir *os.File) error          { return errNotLinux }

func ownedByWorker(fi os.FileInfo) bool { return true }
func groupTree(dir *os.File) error      { return nil }
func (l *Local) handBack()              {}

type innerKiller struct{ w *os.File }

func newInnerKiller() (*innerKiller, error)      { return nil, errNotLinux }
func (k *innerKiller) start(cmd *exec.Cmd) error { return errNotLinux }
func (k *innerKiller) release()                  {}
