package sandbox

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/agentfleet/agentfleet/execenv"
	"github.com/agentfleet/agentfleet/execenv/sandbox/allowlist"
	"github.com/agentfleet/agentfleet/execenv/sandbox/egress"
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
	// Env are variables ("KEY=value") every command gets, before its own.
	Env []string
	// Logger receives the egress proxy's refusals; nil discards them.
	Logger *slog.Logger
	// AllowPrivate are the internal addresses the egress proxy may
	// connect to (the operator's outbound_allow_private); every other
	// non-public address is refused after resolution.
	AllowPrivate []netip.Prefix
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
// as Settings say (see Confine), and so does grep's ripgrep when the
// sandbox can see it; its file operations are checked as files.go says
// (wrap it with Scope to keep them in the workspace). Cleanup also stops
// its egress proxy.
type Local struct {
	*execenv.Local
	proxy    *egress.Proxy
	tmpDir   string   // the sandbox's home and /tmp, and the proxy's socket
	readOnly []string // Settings.ReadOnly
}

// NewLocal returns a local environment for cfg whose commands are
// confined by s. Commands that cannot be confined fail; none runs
// unconfined.
func NewLocal(cfg execenv.LocalConfig, s Settings) (*Local, error) {
	if err := CheckSettings(s); err != nil {
		return nil, err
	}
	cfg = cfg.WithDefaults()
	l := &Local{readOnly: s.ReadOnly}
	var err error
	if l.tmpDir, err = os.MkdirTemp("", "agentfleet-sandbox-"); err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	for _, d := range []string{"home", "tmp"} {
		if err = os.Mkdir(filepath.Join(l.tmpDir, d), 0o700); err != nil {
			break
		}
	}
	if err == nil && s.Network == NetworkAllowlist {
		err = l.startProxy(s)
	}
	if err == nil {
		cfg.NoRipgrep = cfg.NoRipgrep || !ripgrepVisible(s.ReadOnly)
		cfg = confine(cfg, s, Policy{Home: filepath.Join(l.tmpDir, "home"), Tmp: filepath.Join(l.tmpDir, "tmp"), Egress: l.socket()})
		l.Local, err = execenv.NewLocal(cfg)
	}
	if err != nil {
		l.release()
		return nil, err
	}
	return l, nil
}

// Confine returns cfg with every command run under bubblewrap: the
// working directory is the writable workspace, the environment is only
// the command's own variables plus PATH, LANG, LC_* and TZ of the worker,
// and egressSocket, when not "", is the proxy that is the only way out
// (NetworkAllowlist without one has no way out at all). It is the one
// entry point for every process a local task starts; NewLocal adds a
// home and /tmp that last and the proxy.
func Confine(cfg execenv.LocalConfig, s Settings, egressSocket string) execenv.LocalConfig {
	return confine(cfg, s, Policy{Egress: egressSocket})
}

// confine is Confine with base's Home, Tmp and Egress.
func confine(cfg execenv.LocalConfig, s Settings, base Policy) execenv.LocalConfig {
	cfg = cfg.WithDefaults()
	cfg.EnvPolicy = execenv.EnvNone
	base.Workspace, base.ReadOnly, base.Writable, base.Network = cfg.WorkingDir, s.ReadOnly, s.Writable, s.Network == NetworkFull
	fixed := append(hostEnv(), s.Env...)
	cfg.Wrap = func(dir string, argv, env []string) ([]string, []string, error) {
		p := base
		p.Dir, p.Env = dir, append(append([]string{}, fixed...), env...)
		full, err := p.Command(argv)
		return full, []string{}, err
	}
	return cfg
}

// ripgrepVisible reports whether the rg on PATH is one a sandbox can run
// (under the system directories or readOnly), so that grep runs it inside
// the sandbox; otherwise grep uses execenv's search in the worker.
func ripgrepVisible(readOnly []string) bool {
	rg, err := exec.LookPath("rg")
	if err != nil {
		return false
	}
	real := realPath(rg)
	for _, dir := range append(append([]string{}, systemDirs...), readOnly...) {
		if under(real, realPath(dir)) {
			return true
		}
	}
	return false
}

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
	l.proxy, err = egress.Listen(filepath.Join(l.tmpDir, "egress.sock"), allow, s.Logger, s.AllowPrivate...)
	return err
}

func (l *Local) socket() string {
	if l.proxy == nil {
		return ""
	}
	return l.proxy.Addr()
}

// release stops the proxy and removes the home, /tmp and socket.
func (l *Local) release() {
	if l.proxy != nil {
		l.proxy.Close()
	}
	os.RemoveAll(l.tmpDir)
}

// Cleanup kills the commands still running, then stops the egress proxy
// and removes the sandbox's home and /tmp.
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
	return allowlist.Check(s.AllowHosts)
}
