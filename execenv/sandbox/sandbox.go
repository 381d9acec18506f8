package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/agentfleet/agentfleet/execenv/sandbox/egress"
)

// Policy says what a sandboxed command sees and reaches. The zero value
// of every field is the strictest setting.
type Policy struct {
	// Workspace is the only directory the command may write (absolute).
	// It is also the working directory unless Dir says otherwise.
	Workspace string
	// Dir is the command's working directory (absolute); "" means
	// Workspace.
	Dir string
	// Home and Tmp are host directories that hold the sandbox's home and
	// /tmp, so that files there last from one command to the next (build
	// caches); "" gives each command an empty in-memory one.
	Home, Tmp string
	// ReadOnly are further directories or files it may read (absolute):
	// a shared cache, a toolchain outside /usr.
	ReadOnly []string
	// Writable are further directories it may write (absolute), shared
	// with whoever else binds them: a build cache the operator trusts.
	Writable []string
	// Network gives the command the host's network; false gives it a
	// network namespace of its own with only a loopback interface.
	Network bool
	// Egress, when set, is the unix socket of an egress proxy
	// (execenv/sandbox/egress): it is bound into the sandbox, the command
	// runs under the proxy's forwarder and its environment points at it.
	// It needs Network false: the proxy is then the only way out.
	Egress string
	// Env is the whole environment of the command ("KEY=value"); nothing
	// of the caller's environment reaches it otherwise. HOME and TMPDIR are
	// set to the private home and /tmp unless Env sets them.
	Env []string
	// WorkspaceFD, when > 0, is the workspace as the caller opened it, as
	// the descriptor bwrap will hold (3 for the first of
	// exec.Cmd.ExtraFiles): it is bound in place of the name
	// (--bind-fd), so that what is bound is where the opened directory is
	// now, whatever became of its name (a link swapped in is not
	// followed). bwrap resolves that place by name as its own uid: every
	// directory above it must be searchable by that uid. Workspace stays
	// where it is seen inside.
	WorkspaceFD int
	// Forwarder is the egress forwarder's executable to bind; ""
	// means egress.Executable().
	Forwarder string
	// SeccompFD, when > 0, is where bwrap reads the seccomp filter
	// (Seccomp) from.
	SeccompFD int
	// ReadOnlyFDs are directories bwrap holds open, bound read-only as
	// opened (--ro-bind-fd; see OpenedDir).
	ReadOnlyFDs []BoundFD
	// Image, when set, is a root file system (an unpacked OCI image) the
	// command sees in place of the host's system directories and /etc
	// files (see image.go); Sources may give its host path.
	Image string
	// UsernsFD, when > 0, is a user namespace the command joins
	// (--userns) in place of a new one (--unshare-user): a worker that is
	// not root maps InnerID there to a subordinate uid (see Local).
	// bwrap refuses --disable-userns with it: the namespace's own
	// user.max_user_namespaces (0) and the seccomp filter stand instead.
	UsernsFD int
	// InfoFD, when > 0, is where bwrap writes what it started
	// (--info-fd): the host pid of the sandbox's first process.
	InfoFD int
	// Sources, when set, maps a directory the sandbox sees (Workspace, a
	// ReadOnly or Writable entry) to the host path bound there, in place
	// of the same path: a root worker's portals (see Local).
	Sources map[string]string
}

// source is the host path bound at dest.
func (p Policy) source(dest string) string {
	if src, ok := p.Sources[dest]; ok {
		return src
	}
	return dest
}

// Home is the private, empty home directory of a sandboxed command.
const Home = "/home/agent"

// systemDirs are the parts of the host a command may read: the system's
// programs and libraries (and the symbolic links a merged /usr has at the
// root), never /home, /root, /var, /run or the rest of /etc.
var systemDirs = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt"}

// etcFiles are the files of /etc that programs need to run and to resolve
// names; the rest of /etc (where a worker's configuration may live) stays
// hidden.
var etcFiles = []string{
	"alternatives", "ca-certificates", "ca-certificates.conf", "gai.conf", "gitconfig", "group", "host.conf",
	"hosts", "inputrc", "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime", "mime.types", "nsswitch.conf",
	"passwd", "profile", "protocols", "resolv.conf", "services", "ssl", "timezone",
}

// ErrUnavailable means bubblewrap is not installed or cannot create the
// namespaces it needs on this machine.
var ErrUnavailable = errors.New("sandbox: bubblewrap (bwrap) is not available: install it (Debian: apt-get install bubblewrap) or run the worker where user namespaces are allowed")

// bwrapPath is where bwrap is, looked up on PATH once per process: each
// task's environment needs it, and the lookup is a stat per PATH entry.
var bwrapPath = sync.OnceValues(func() (string, error) { return exec.LookPath("bwrap") })

// Available reports whether bwrap is installed and can run a command
// here as the sandbox does: in a user namespace of its own, started by an
// unprivileged uid (one of the default range when this process is root),
// with the descriptor bindings it uses.
func Available() error {
	if runtime.GOOS != "linux" {
		return fmt.Errorf("%w: bubblewrap runs on Linux only, and this is %s", ErrUnavailable, runtime.GOOS)
	}
	path, err := bwrapPath()
	if err != nil {
		return ErrUnavailable
	}
	if help, _ := exec.Command(path, "--help").CombinedOutput(); !strings.Contains(string(help), "--bind-fd") {
		return fmt.Errorf("%w: this bwrap has no --bind-fd: install bubblewrap 0.8.0 or later (Debian 12 has it)", ErrUnavailable)
	}
	cmd := exec.Command(path, "--unshare-user", "--cap-drop", "ALL", "--ro-bind", "/", "/", "--unshare-all", "--die-with-parent", "true")
	cmd.Dir = "/"
	probeAs(cmd, DefaultUIDLast)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%w: %s: %v (bubblewrap needs unprivileged user namespaces: see docs/operations.md)", ErrUnavailable, strings.TrimSpace(string(out)), err)
	}
	return nil
}

// hasDisableUserns reports whether this bwrap has --disable-userns
// (bubblewrap 0.8.0 and later), asked once per process. An older one
// runs without it: nested user namespaces are then refused by the
// seccomp filter alone (unshare, setns and clone with CLONE_NEWUSER).
var hasDisableUserns = sync.OnceValue(func() bool {
	out, _ := exec.Command("bwrap", "--help").CombinedOutput()
	return strings.Contains(string(out), "--disable-userns")
})

// Command returns argv run under p: bwrap's own arguments, then argv.
// The command gets the workspace read-write, the system read-only, a
// private /tmp and home, its own /proc, /dev and user, PID, IPC and UTS
// namespaces, no network unless p.Network, and exactly p.Env. It runs as
// InnerID with no capability, cannot make user namespaces of its own
// (--disable-userns where bwrap has it, and the seccomp filter), dies
// with its parent and cannot reach the terminal of the worker. Which uid
// it has outside is the caller's (bwrap's own): see Local.
func (p Policy) Command(argv []string) ([]string, error) {
	if err := p.validate(); err != nil {
		return nil, err
	}
	if len(argv) == 0 {
		return nil, errors.New("sandbox: no command to run")
	}
	id := strconv.Itoa(InnerID)
	userns := []string{"--unshare-user"}
	if p.UsernsFD > 0 {
		userns = []string{"--userns", strconv.Itoa(p.UsernsFD)}
	}
	args := append(append([]string{"bwrap", "--die-with-parent", "--new-session"}, userns...),
		"--uid", id, "--gid", id, "--cap-drop", "ALL",
		"--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
		"--proc", "/proc", "--dev", "/dev")
	if p.UsernsFD <= 0 && hasDisableUserns() {
		args = append(args, "--disable-userns")
	}
	if p.SeccompFD > 0 {
		args = append(args, "--seccomp", strconv.Itoa(p.SeccompFD))
	}
	if p.InfoFD > 0 {
		args = append(args, "--info-fd", strconv.Itoa(p.InfoFD))
	}
	args = append(args, privateDir(p.Tmp, "/tmp")...)
	args = append(args, "--tmpfs", "/home")
	args = append(args, privateDir(p.Home, Home)...)
	if !p.Network {
		args = append(args, "--unshare-net")
	}
	if p.Image != "" {
		args, argv = append(args, p.imageArgs()...), imageShell(p.Image, argv)
	} else {
		args = append(args, systemArgs()...)
	}
	for _, ro := range p.ReadOnly {
		args = append(args, "--ro-bind", p.source(ro), ro)
	}
	for _, rw := range p.Writable {
		args = append(args, "--bind", p.source(rw), rw)
	}
	args = append(args, openedArgs(p.ReadOnlyFDs)...)
	env := p.environment()
	if p.Egress != "" {
		exe := p.Forwarder
		if exe == "" {
			var err error
			if exe, err = egress.Executable(); err != nil {
				return nil, err
			}
		}
		args = append(args, "--ro-bind", exe, egress.InnerForwarder, "--bind", p.Egress, egress.InnerSocket)
		argv = egress.Wrap(argv)
		env = append(env, egress.ProxyEnv()...)
	}
	dir := p.Dir
	if dir == "" {
		dir = p.Workspace
	}
	if p.WorkspaceFD > 0 {
		args = append(args, "--bind-fd", strconv.Itoa(p.WorkspaceFD), p.Workspace)
	} else {
		args = append(args, "--bind", p.source(p.Workspace), p.Workspace)
	}
	args = append(args, "--chdir", dir, "--clearenv")
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		args = append(args, "--setenv", k, v)
	}
	return append(append(args, "--"), argv...), nil
}

// privateDir binds host at dir, or mounts an empty tmpfs there.
func privateDir(host, dir string) []string {
	if host == "" {
		return []string{"--tmpfs", dir}
	}
	return []string{"--bind", host, dir}
}

func (p Policy) validate() error {
	var errs []error
	if !filepath.IsAbs(p.Workspace) {
		errs = append(errs, fmt.Errorf("sandbox: Policy.Workspace %q must be an absolute directory", p.Workspace))
	} else if fi, err := os.Stat(p.source(p.Workspace)); p.WorkspaceFD <= 0 && (err != nil || !fi.IsDir()) {
		errs = append(errs, fmt.Errorf("sandbox: Policy.Workspace %q is not a directory", p.Workspace))
	}
	for name, d := range map[string]string{"Dir": p.Dir, "Home": p.Home, "Tmp": p.Tmp, "Image": p.Image} {
		if d != "" && !filepath.IsAbs(d) {
			errs = append(errs, fmt.Errorf("sandbox: Policy.%s %q must be absolute", name, d))
		}
	}
	if p.Egress != "" && p.Network {
		errs = append(errs, errors.New("sandbox: Policy.Egress needs Network false: the proxy must be the only way out"))
	}
	for _, ro := range append(p.ReadOnly, p.Writable...) {
		if !filepath.IsAbs(ro) {
			errs = append(errs, fmt.Errorf("sandbox: Policy.ReadOnly and Writable entry %q must be absolute", ro))
		}
	}
	for _, kv := range p.Env {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
			errs = append(errs, fmt.Errorf("sandbox: Policy.Env entry %q must be KEY=value", kv))
		}
	}
	return errors.Join(errs...)
}

// environment is p.Env with HOME and TMPDIR defaulted, and git's
// ownership check off, sorted by key.
//
// git refuses a repository whose files belong to another uid
// (safe.directory): a guard for a user against another user's hooks and
// configuration. In a sandbox every repository the command sees is its
// task's own, made by the worker or by an earlier uid of the same task
// tree (a parent's .git bound into its child's worktree, a workspace
// re-owned between runs), so the check only breaks git there; the
// sandbox, not the check, is what confines the command. A spec's own
// GIT_CONFIG_* variables replace these.
func (p Policy) environment() []string {
	env := map[string]string{"HOME": Home, "TMPDIR": "/tmp",
		"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "safe.directory", "GIT_CONFIG_VALUE_0": "*"}
	for _, kv := range p.Env {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// systemArgs binds the system directories read-only, keeping a symbolic
// link at the root (merged /usr) a link, and the needed files of /etc.
func systemArgs() []string {
	var args []string
	for _, dir := range systemDirs {
		fi, err := os.Lstat(dir)
		switch {
		case err != nil:
			continue
		case fi.Mode()&os.ModeSymlink != 0:
			if target, err := os.Readlink(dir); err == nil {
				args = append(args, "--symlink", target, dir)
			}
		default:
			args = append(args, "--ro-bind", dir, dir)
		}
	}
	for _, name := range etcFiles {
		path := filepath.Join("/etc", name)
		if _, err := os.Stat(path); err == nil {
			args = append(args, "--ro-bind", path, path)
		}
	}
	return args
}
