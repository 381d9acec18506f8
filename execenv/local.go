package execenv

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// LocalConfig configures a Local environment. Zero values mean the defaults.
type LocalConfig struct {
	// WorkingDir is where relative paths and commands start; "" means the
	// process's current directory. It is made absolute.
	WorkingDir string
	// DefaultTimeout applies when a request gives none; default 10 s.
	DefaultTimeout time.Duration
	// MaxTimeout caps every request; default 10 min.
	MaxTimeout time.Duration
	// EnvPolicy filters the worker's environment; default EnvInheritAll.
	EnvPolicy EnvPolicy
	// KeepSecrets keeps secret-looking variables under EnvInheritAll.
	KeepSecrets bool
	// MaxOutputBytes bounds retained output per stream; default 16 MiB.
	MaxOutputBytes int
	// Shared marks the working directory as reachable from every worker
	// (a shared volume); it is reported in Describe.
	Shared bool
	// CreateOnFirstUse defers creating WorkingDir from Initialize to the
	// first operation that needs it (see "Working directory" in the
	// package doc), so an environment nothing touches costs no mkdir.
	CreateOnFirstUse bool
	// NoRipgrep forces the pure-Go search even when rg is on PATH. rg is
	// looked up once per process and value of PATH (ripgrepOnPath).
	NoRipgrep bool
	// Wrap, when set, turns every command into the program actually
	// started: it gets the command's directory, bash's argv and the
	// environment the policy let through, and returns the argv and
	// environment to run. execenv/sandbox confines commands this way; an
	// error fails Exec without running anything.
	Wrap func(dir string, argv, env []string) ([]string, []string, error)
}

// WithDefaults returns a copy with zero fields set to their defaults.
func (c LocalConfig) WithDefaults() LocalConfig {
	if c.WorkingDir == "" {
		if wd, err := os.Getwd(); err == nil {
			c.WorkingDir = wd
		}
	}
	if c.WorkingDir != "" {
		if abs, err := filepath.Abs(c.WorkingDir); err == nil {
			c.WorkingDir = abs
		}
	}
	commandDefaults(&c.DefaultTimeout, &c.MaxTimeout, &c.MaxOutputBytes, &c.EnvPolicy)
	return c
}

// Validate reports invalid fields.
func (c LocalConfig) Validate() error {
	var errs []error
	if c.WorkingDir != "" && !filepath.IsAbs(c.WorkingDir) {
		errs = append(errs, fmt.Errorf("LocalConfig.WorkingDir must be absolute after WithDefaults, got %q", c.WorkingDir))
	}
	errs = append(errs, validateCommon("LocalConfig", c.DefaultTimeout, c.MaxTimeout, c.MaxOutputBytes, c.EnvPolicy))
	return errors.Join(errs...)
}

// Local runs commands and touches files on this machine.
type Local struct {
	cfg    LocalConfig
	rgPath string // "" when ripgrep is not used

	mu      sync.Mutex
	running map[int]struct{} // process groups of commands in flight
	closed  bool

	dirMu    sync.Mutex  // serializes the creation of the working directory
	dirReady atomic.Bool // the working directory was created (CreateOnFirstUse)
}

// NewLocal returns a Local environment for cfg (defaults applied).
func NewLocal(cfg LocalConfig) (*Local, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	l := &Local{cfg: cfg, running: map[int]struct{}{}}
	if !cfg.NoRipgrep {
		l.rgPath = ripgrepOnPath()
	}
	return l, nil
}

var _ Environment = (*Local)(nil)

// Initialize creates the working directory, unless CreateOnFirstUse
// leaves that to the first operation that needs it.
func (l *Local) Initialize(ctx context.Context) error {
	if l.cfg.CreateOnFirstUse {
		return ctx.Err()
	}
	if err := os.MkdirAll(l.cfg.WorkingDir, 0o755); err != nil {
		return fmt.Errorf("execenv: create working directory: %w", err)
	}
	return nil
}

// Cleanup kills the process groups of commands still running. Safe to call
// more than once.
func (l *Local) Cleanup(ctx context.Context) error {
	l.mu.Lock()
	l.closed = true
	groups := make([]int, 0, len(l.running))
	for pg := range l.running {
		groups = append(groups, pg)
	}
	l.mu.Unlock()
	for _, pg := range groups {
		killGroup(pg)
	}
	return nil
}

// WorkingDir is the absolute working directory.
func (l *Local) WorkingDir() string { return l.cfg.WorkingDir }

// Platform is runtime.GOOS.
func (l *Local) Platform() string { return runtime.GOOS }

// OSVersion reads the kernel release ("Linux 6.1.0-...").
func (l *Local) OSVersion() string { return localOSVersion() }

// Describe returns a local description (Shared as configured).
func (l *Local) Describe() Description {
	return Description{Kind: KindLocal, WorkingDir: l.cfg.WorkingDir, Shared: l.cfg.Shared}
}

// UsesRipgrep reports whether Grep runs rg (false: the pure-Go search).
func (l *Local) UsesRipgrep() bool { return l.rgPath != "" }

// resolve makes path absolute against the working directory.
func (l *Local) resolve(path string) string {
	if path == "" {
		return l.cfg.WorkingDir
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(l.cfg.WorkingDir, path)
	}
	return filepath.Clean(path)
}

// localOSVersion is "<sysname> <release>" from uname, or GOOS, read once
// per process (every session's prompt asks for it).
var localOSVersion = sync.OnceValue(readOSVersion)

func readOSVersion() string {
	if data, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		return "Linux " + strings.TrimSpace(string(data))
	}
	out, err := exec.Command("uname", "-sr").Output()
	if err != nil {
		return runtime.GOOS
	}
	return strings.TrimSpace(string(out))
}
