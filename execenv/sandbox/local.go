package sandbox

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/agentfleet/agentfleet/execenv"
	"github.com/agentfleet/agentfleet/execenv/sandbox/allowlist"
	"github.com/agentfleet/agentfleet/execenv/sandbox/egress"
	"github.com/agentfleet/agentfleet/internal/dirlock"
)

// Network is how far a sandboxed command reaches.
type Network string

const (
	// NetworkNone gives the sandbox a network namespace with only a
	// loopback interface of its own (the default; the zero value).
	NetworkNone Network = "none"
	// NetworkAllowlist adds an egress proxy that admits the allowlisted
	// host names, and nothing else.
	NetworkAllowlist Network = "allowlist"
	// NetworkFull shares the worker's network.
	NetworkFull Network = "full"
)

// Settings say how the commands of one local environment are confined.
type Settings struct {
	// Network is NetworkNone ("" too), NetworkAllowlist or NetworkFull.
	Network Network
	// AllowHosts are the hosts of NetworkAllowlist (see allowlist.List).
	AllowHosts []string
	// ReadOnly are further paths the commands may read (absolute).
	ReadOnly []string
	// Writable are further directories the commands may write (absolute),
	// shared by every sandbox that names them: a build cache. The file
	// tools do not reach them.
	Writable []string
	// ReadOnlyDirs are directories the caller opened that the commands
	// may read, each bound as opened (see OpenedDir). The file tools do
	// not reach them.
	ReadOnlyDirs []OpenedDir
	// Env are variables ("KEY=value") every command gets, before its own.
	Env []string
	// Logger receives the egress proxy's refusals; nil discards them.
	Logger *slog.Logger
	// AllowPrivate are the internal addresses the egress proxy may
	// connect to (the operator's outbound_allow_private); every other
	// non-public address is refused after resolution.
	AllowPrivate []netip.Prefix
	// IDs gives the commands their uid outside the sandbox when the
	// worker is root: Tree's (a task tree shares its uid); nil means a
	// process-wide allocator of the default range, and Tree "" a uid of
	// the environment's own. A worker that is not root runs its
	// sandboxes as its own uid.
	IDs  *IDs
	Tree string
	// Limits bound everything the commands start; zero fields: none.
	Limits Limits
	// OnLimit, when set, learns of each command that hit a limit.
	OnLimit func(LimitHit)
	// Image, when set, is the root file system the commands run in (see
	// image.go); Env should then carry the image's own (its PATH).
	Image string
}

// Label is a short description of s for events and results:
// "bwrap, network none", "bwrap, network allowlist (2 hosts)",
// "bwrap, network full".
func (s Settings) Label() string {
	switch s.Network {
	case NetworkAllowlist:
		if len(s.AllowHosts) == 1 {
			return "bwrap, network allowlist (1 host)"
		}
		return fmt.Sprintf("bwrap, network allowlist (%d hosts)", len(s.AllowHosts))
	case NetworkFull:
		return "bwrap, network full"
	}
	return "bwrap, network none"
}

// Local is a local environment whose every command runs under bubblewrap
// as Settings say, and so does grep's ripgrep when the sandbox can see
// it; its file operations are checked as files.go says (wrap it with
// Scope to keep them in the workspace). Its commands run as an
// unprivileged uid outside the sandbox (see "Users" in the package doc)
// within its Limits. Cleanup also stops its egress proxy and gives its
// uid back.
type Local struct {
	*execenv.Local
	proxy    *egress.Proxy
	tmpDir   string   // the sandbox's home and /tmp, and the proxy's socket
	dirLock  *os.File // tmpDir, locked while this sandbox lives (SweepStale); nil until made
	readOnly []string // Settings.ReadOnly
	uid      int      // the commands' uid outside; -1: the worker's own
	shared   int      // the owner of shared writable paths (IDs.Shared)
	putUID   func()   // gives uid back
	// sub is set when the worker is not root and has subordinate uids:
	// subUID is then the commands' uid outside, through userns (made by
	// prepare), and what they share with the worker is its group's
	// (subuid.go, "Users" in the package doc).
	sub     *subordinate
	subUID  int
	userns  *taskUserns // made once by ns
	nsOnce  sync.Once
	nsErr   error
	limits  Limits
	onLimit func(LimitHit)
	cgroup  *taskCgroup // nil: limits are resource limits (prlimit)
	portals *portals    // a root worker's (portal_linux.go), made by prepare; nil: sources bound by name
	// usePortals says whether this environment binds through portals
	// (a root worker that may make mount namespaces); portalCfg and
	// portalSettings are what prepare makes them from, once.
	usePortals     bool
	portalCfg      execenv.LocalConfig
	portalSettings Settings
	portalOnce     sync.Once
	portalErr      error
	wsPortal       string // the workspace's portal
	sources        map[string]string
	bwrap          string // bwrap's path
	fwd            string // the egress forwarder's executable

	wsMu  sync.Mutex
	ws    *os.File // the workspace as opened; nil until it exists
	ownWS bool     // ws was opened here and is closed by Cleanup

	releaseOnce sync.Once
}

// NewLocal returns a local environment for cfg whose commands are
// confined by s. Commands that cannot be confined fail; none runs
// unconfined.
//
// The workspace is bound as opened: cfg.WorkingDirFile when set, else
// cfg.WorkingDir opened here without following a link in its last
// component (at once when it exists, else when it is first created).
// When the worker is root, the workspace tree, the home and /tmp are
// given to the commands' uid when opened.
func NewLocal(cfg execenv.LocalConfig, s Settings) (*Local, error) {
	if err := CheckSettings(s); err != nil {
		return nil, err
	}
	if err := s.Limits.Validate(); err != nil {
		return nil, fmt.Errorf("sandbox: limits: %w", err)
	}
	cfg = cfg.WithDefaults()
	l := &Local{readOnly: s.ReadOnly, uid: -1, limits: s.Limits, onLimit: s.OnLimit}
	err := l.setUp(&cfg, s)
	if err == nil {
		cfg.NoRipgrep = cfg.NoRipgrep || s.Image != "" || !ripgrepVisible(s.ReadOnly)
		base := Policy{Home: filepath.Join(l.tmpDir, "home"), Tmp: filepath.Join(l.tmpDir, "tmp"), Egress: l.socket()}
		cfg = confine(cfg, s, base, l.wrap)
		l.Local, err = execenv.NewLocal(cfg)
	}
	if err != nil {
		l.release()
		return nil, err
	}
	return l, nil
}

// setUp takes the uid, makes the home and /tmp, starts the proxy, opens
// the workspace and makes the cgroup.
func (l *Local) setUp(cfg *execenv.LocalConfig, s Settings) error {
	var err error
	if l.bwrap, err = bwrapPath(); err != nil {
		return ErrUnavailable
	}
	if isRoot() {
		ids, key := s.IDs, s.Tree
		if ids == nil {
			ids = defaultIDs()
		}
		if key == "" {
			key = fmt.Sprintf("env-%p", l)
		}
		if l.uid, l.putUID, err = ids.Acquire(key); err != nil {
			return err
		}
		l.shared = ids.Shared()
	} else if sub, serr := subordinateIDs(); serr == nil {
		ids, key := s.IDs, s.Tree
		if ids == nil || !ids.inside(sub.first, sub.last) {
			ids = defaultSubIDs()
		}
		if key == "" {
			key = fmt.Sprintf("env-%p", l)
		}
		if l.subUID, l.putUID, err = ids.Acquire(key); err != nil {
			return err
		}
		l.sub = sub
	}
	// The home and /tmp, and the portals, are made before the first
	// command (prepare): a task that never runs one (an answer, file
	// tools only) pays no mkdir for them. Only their name is chosen now.
	if l.tmpDir, err = tempName(tmpPrefix); err != nil {
		return fmt.Errorf("sandbox: %w", err)
	}
	l.usePortals = l.uid >= 0 && portalsWork()
	l.portalCfg, l.portalSettings = *cfg, s
	if s.Network == NetworkAllowlist {
		if err := l.makeDirs(); err != nil { // the proxy's socket lives there
			return err
		}
		if err := l.startProxy(s); err != nil {
			return err
		}
		if !l.usePortals {
			fwdUID := l.uid
			if l.sub != nil && !othersMayRun() {
				fwdUID = l.subUID // bwrap binds it as the worker; the task's uid must run it
			}
			if l.fwd, err = forwarderFor(fwdUID, l.tmpDir); err != nil {
				return err
			}
		}
	}
	if l.ws = cfg.WorkingDirFile; l.ws != nil {
		err = l.ownTree()
	} else if _, statErr := os.Lstat(cfg.WorkingDir); statErr == nil {
		err = l.openWorkspace(cfg.WorkingDir)
	}
	if err != nil {
		return err
	}
	if s.Limits.Pids > 0 || s.Limits.Memory > 0 || s.Limits.CPUs > 0 {
		if p, perr := delegated(); perr == nil {
			l.cgroup, err = p.child(s.Limits)
		}
	}
	return err
}

// makePortals gives a root worker's workspace and the operator's
// read-only and writable paths portals (see portal_linux.go), where the
// worker may make mount namespaces.
func (l *Local) makePortals(cfg execenv.LocalConfig, s Settings) error {
	if !l.usePortals {
		return nil
	}
	l.portals = &portals{dir: filepath.Join(l.tmpDir, "portals")}
	if err := os.Mkdir(l.portals.dir, 0o711); err != nil {
		return err
	}
	var err error
	if l.wsPortal, err = l.portals.add("", true); err != nil { // its source is the workspace as opened, at each start
		return err
	}
	l.sources = map[string]string{cfg.WorkingDir: l.wsPortal}
	if s.Image != "" {
		if l.sources[s.Image], err = l.portals.add(s.Image, true); err != nil {
			return err
		}
	}
	if len(s.Writable) > 0 {
		if l.portals.idmap, err = newIdmap(l.shared, l.uid); err != nil {
			return err
		}
	}
	for i, src := range append(append([]string{}, s.ReadOnly...), s.Writable...) {
		fi, err := os.Stat(src)
		if err != nil {
			continue // bound by name: bwrap says what is wrong with it
		}
		if l.sources[src], err = l.portals.add(src, fi.IsDir()); err != nil {
			return err
		}
		if i >= len(s.ReadOnly) && idmapWorks(src, l.portals.idmap) {
			l.portals.list[len(l.portals.list)-1].idmap = true
			if err := l.shareEmpty(src); err != nil {
				return err
			}
		}
	}
	return l.addOpenedPortals(s.ReadOnlyDirs)
}

// shareEmpty gives an empty shared writable directory (a cache made for
// the tasks) to the shared uid, so that tasks may write it through its
// idmap. One with content is left as it is: what root owns in it is
// read-only to tasks (give it to IDs.Shared to share it).
func (l *Local) shareEmpty(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) > 0 {
		return nil //nolint:nilerr // unreadable or not empty: left as it is (see above)
	}
	if err := os.Lchown(dir, l.shared, l.shared); err != nil {
		return fmt.Errorf("sandbox: giving %s (sandbox_writable) to the tasks' shared uid %d: %w", dir, l.shared, err)
	}
	return nil
}

// chown gives path (not following a link) to the commands' uid when it
// is not the worker's.
func (l *Local) chown(path string) error {
	if l.uid < 0 {
		return nil
	}
	return os.Lchown(path, l.uid, l.uid)
}

// makeDirs makes the sandbox's directory (a fresh one: it fails if the
// name exists) with its home and /tmp, given to the commands' uid.
func (l *Local) makeDirs() error {
	if l.dirLock != nil {
		return nil
	}
	// Made under a name SweepStale does not look at, locked, then renamed
	// into place: a sweep never sees it unlocked.
	staging := filepath.Join(filepath.Dir(l.tmpDir), "."+filepath.Base(l.tmpDir))
	if err := os.Mkdir(staging, 0o700); err != nil {
		return fmt.Errorf("sandbox: %w", err)
	}
	lock, err := dirlock.Lock(staging) // held until release
	if err == nil {
		err = os.Rename(staging, l.tmpDir)
	}
	if err != nil {
		if lock != nil {
			_ = lock.Close()
		}
		_ = os.Remove(staging)
		return fmt.Errorf("sandbox: making %s: %w", l.tmpDir, err)
	}
	l.dirLock = lock
	for _, d := range []string{"home", "tmp"} {
		if err := os.Mkdir(filepath.Join(l.tmpDir, d), 0o700); err != nil {
			return err
		}
		if err := l.give(filepath.Join(l.tmpDir, d), 0o770); err != nil {
			return err
		}
	}
	if err := l.handOver(filepath.Join(l.tmpDir, "home"), filepath.Join(l.tmpDir, "tmp")); err != nil {
		return err
	}
	if err := l.chown(l.tmpDir); err != nil {
		return err
	}
	return reachableBy(l.tmpDir, l.uid)
}

// tempName is a fresh name in the temporary directory, not made.
func tempName(prefix string) (string, error) {
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return filepath.Join(os.TempDir(), prefix+hex.EncodeToString(b[:])), nil
}

// prepare makes the home and /tmp, the portals, and the egress
// forwarder's, once, before the first command starts; every command after
// it uses them.
func (l *Local) prepare() error {
	l.portalOnce.Do(func() {
		if l.portalErr = l.makeDirs(); l.portalErr != nil {
			return
		}
		if l.sub != nil {
			if _, l.portalErr = l.ns(); l.portalErr != nil {
				return
			}
		}
		if l.portalErr = l.makePortals(l.portalCfg, l.portalSettings); l.portalErr != nil || !l.usePortals {
			return
		}
		if l.portalSettings.Network == NetworkAllowlist {
			exe, err := egress.Executable()
			if err == nil {
				l.fwd, err = l.portals.add(exe, false)
			}
			l.portalErr = err
		}
	})
	return l.portalErr
}

// openWorkspace opens dir (see NewLocal) and gives it to the uid.
func (l *Local) openWorkspace(dir string) error {
	ws, err := openWorkspace(dir)
	if err != nil {
		return fmt.Errorf("sandbox: opening the workspace: %w", err)
	}
	l.ws, l.ownWS = ws, true
	return l.ownTree()
}

// ownTree gives the workspace tree to the commands' uid (with
// subordinate uids, what the worker owns of it, made writable by its
// group first: groupTree).
func (l *Local) ownTree() error {
	if l.sub != nil {
		if err := groupTree(l.ws); err != nil {
			return fmt.Errorf("sandbox: making the workspace writable by the worker's group for the task's uid %d: %w", l.subUID, err)
		}
		ns, err := l.ns()
		if err != nil {
			return err
		}
		return ns.chownTree(l.ws)
	}
	if l.uid < 0 {
		return nil
	}
	if !l.usePortals {
		if err := reachableBy(fdPath(l.ws), l.uid); err != nil {
			return err
		}
	}
	if err := chownTree(l.ws, l.uid); err != nil {
		return fmt.Errorf("sandbox: giving the workspace to the task's uid %d: %w", l.uid, err)
	}
	return nil
}

// workspace is the opened workspace, opened now if it was created since
// NewLocal (CreateOnFirstUse): callers make sure it exists.
func (l *Local) workspace() (*os.File, error) {
	l.wsMu.Lock()
	defer l.wsMu.Unlock()
	if l.ws == nil {
		if err := l.openWorkspace(l.WorkingDir()); err != nil {
			return nil, err
		}
	}
	return l.ws, nil
}

// wrap makes one command's bwrap: the workspace, the seccomp filter and
// the forwarder as descriptors, the resource limits in front, the uid
// and cgroup as process attributes; with subordinate uids, the user
// namespace and bwrap's info pipe as descriptors too, the umask 002 in
// front, and a start that kills the sandbox when its bwrap ends.
func (l *Local) wrap(p Policy, argv []string) (execenv.Wrapped, error) {
	if err := l.prepare(); err != nil {
		return execenv.Wrapped{}, err
	}
	ws, err := l.workspace()
	if err != nil {
		return execenv.Wrapped{}, err
	}
	filter, err := seccompFile()
	if err != nil {
		return execenv.Wrapped{}, err
	}
	files := []*os.File{ws, filter}
	p.WorkspaceFD, p.SeccompFD, p.Forwarder = 3, 4, l.fwd
	release := func() { _ = filter.Close() }
	var start func(*exec.Cmd) error
	if l.userns != nil {
		info, err := newInnerKiller()
		if err != nil {
			_ = filter.Close()
			return execenv.Wrapped{}, err
		}
		files, p.UsernsFD, p.InfoFD = append(files, l.userns.fd, info.w), 5, 6
		start, release = info.start, func() { _ = filter.Close(); info.release() }
	}
	if l.portals != nil { // the workspace through its portal, its source what was opened
		files, p.WorkspaceFD, p.SeccompFD, p.Sources = files[1:], 0, 3, l.sources
		with := *l.portals
		with.list = append([]portal{{source: fdPath(ws), path: l.wsPortal}}, with.list[1:]...)
		start = with.start
	}
	files = l.bindOpened(&p, files)
	full, err := p.Command(argv)
	if err == nil {
		full[0] = l.bwrap
		var prefix []string
		prefix, err = rlimitArgs(l.limits, l.cgroup != nil, l.uid >= 0 || l.userns != nil)
		full = append(prefix, full...)
		if l.userns != nil { // what the task makes is its group's too: the worker's file tools write it
			full = append([]string{"/bin/sh", "-c", `umask 002 && exec "$@"`, "sh"}, full...)
		}
	}
	if err != nil {
		release()
		return execenv.Wrapped{}, err
	}
	cgroupFD := -1
	if l.cgroup != nil {
		cgroupFD = int(l.cgroup.fd.Fd())
	}
	return execenv.Wrapped{Argv: full, Env: []string{}, Dir: "/", Files: files, Attr: asUser(l.uid, cgroupFD),
		Release: release, Start: start}, nil
}

// confine returns cfg with every command run under bubblewrap: the
// working directory is the writable workspace, the environment is only
// the command's own variables plus PATH, LANG, LC_* and TZ of the worker
// and s.Env, and base's Home, Tmp and Egress; build makes the command.
func confine(cfg execenv.LocalConfig, s Settings, base Policy, build func(Policy, []string) (execenv.Wrapped, error)) execenv.LocalConfig {
	cfg.EnvPolicy = execenv.EnvNone
	base.Workspace, base.ReadOnly, base.Writable, base.Network = cfg.WorkingDir, s.ReadOnly, s.Writable, s.Network == NetworkFull
	base.Image = s.Image
	fixed := append(hostEnv(), s.Env...)
	cfg.Wrap = func(dir string, argv, env []string) (execenv.Wrapped, error) {
		p := base
		p.Dir, p.Env = dir, append(append([]string{}, fixed...), env...)
		return build(p, argv)
	}
	return cfg
}

// ripgrepVisible reports whether the rg on PATH is one a sandbox can run
// (under the system directories or readOnly), so that grep runs it inside
// the sandbox; otherwise grep uses execenv's search in the worker.
func ripgrepVisible(readOnly []string) bool {
	rg, ok := hostRipgrep()
	if !ok {
		return false
	}
	if slices.ContainsFunc(realSystemDirs(), func(dir string) bool { return under(rg, dir) }) {
		return true
	}
	return slices.ContainsFunc(readOnly, func(dir string) bool { return under(rg, realPath(dir)) })
}

// hostRipgrep is where the rg on PATH really is, looked up once per
// process (PATH and the system directories do not change under a worker,
// and every sandbox asked).
var hostRipgrep = sync.OnceValues(func() (string, bool) {
	rg, err := exec.LookPath("rg")
	if err != nil {
		return "", false
	}
	return realPath(rg), true
})

// realSystemDirs are systemDirs with their links resolved, once.
var realSystemDirs = sync.OnceValue(func() []string {
	out := make([]string, len(systemDirs))
	for i, dir := range systemDirs {
		out[i] = realPath(dir)
	}
	return out
})

// hostEnv is the part of the worker's environment a sandboxed command
// gets: where programs are and the locale.
func hostEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k == "PATH" || k == "LANG" || k == "LANGUAGE" || k == "TZ" || strings.HasPrefix(k, "LC_") {
			out = append(out, kv)
		}
	}
	return out
}

func (l *Local) startProxy(s Settings) error {
	allow, err := allowlist.Parse(s.AllowHosts)
	if err != nil {
		return fmt.Errorf("sandbox: %w", err)
	}
	if l.proxy, err = egress.Listen(filepath.Join(l.tmpDir, "egress.sock"), allow, s.Logger, s.AllowPrivate...); err != nil {
		return err
	}
	return l.give(l.proxy.Addr(), 0o660) // the commands' uid connects to it
}

func (l *Local) socket() string {
	if l.proxy == nil {
		return ""
	}
	return l.proxy.Addr()
}

// release stops the proxy, removes the home, /tmp and socket and the
// cgroup, closes what was opened and gives the uid back.
func (l *Local) release() { l.releaseOnce.Do(l.releaseNow) }

func (l *Local) releaseNow() {
	if l.proxy != nil {
		_ = l.proxy.Close()
	}
	if l.userns != nil {
		l.handBack()
		l.userns.close()
	}
	if l.dirLock != nil {
		_ = os.RemoveAll(l.tmpDir)
		_ = l.dirLock.Close()
	}
	if l.cgroup != nil {
		l.cgroup.remove()
	}
	if l.portals != nil && l.portals.idmap != nil {
		_ = l.portals.idmap.Close()
	}
	l.wsMu.Lock()
	if l.ownWS {
		_ = l.ws.Close()
		l.ws, l.ownWS = nil, false
	}
	l.wsMu.Unlock()
	if l.putUID != nil {
		l.putUID()
	}
}

// Cleanup kills the commands still running, then stops the egress proxy,
// removes the sandbox's home and /tmp and its cgroup, and gives its uid
// back. Safe to call more than once.
func (l *Local) Cleanup(ctx context.Context) error {
	err := l.Local.Cleanup(ctx)
	l.release()
	return err
}

// CheckSettings reports a bad Network or AllowHosts entry.
func CheckSettings(s Settings) error {
	switch s.Network {
	case "", NetworkNone, NetworkAllowlist, NetworkFull:
	default:
		return fmt.Errorf("sandbox: network %q must be %q, %q or %q", s.Network, NetworkNone, NetworkAllowlist, NetworkFull)
	}
	if s.Network != NetworkAllowlist && len(s.AllowHosts) > 0 {
		return errors.New("sandbox: allow_hosts needs network \"allowlist\"")
	}
	if err := checkOpened(s.ReadOnlyDirs); err != nil {
		return err
	}
	return allowlist.Check(s.AllowHosts)
}
