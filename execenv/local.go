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
	"syscall"
	"time"
)

// LocalConfig configures a Local environment. Zero values mean the defaults.
type LocalConfig struct {
	// WorkingDir is where relative paths and commands start; "" means the
	// process's current directory. It is made absolute.
	WorkingDir string
	// WorkingDirFile, when set, is WorkingDir as the caller opened it
	// (internal/beneath), so that a sandbox binds what was opened rather
	// than a name that may have changed since (execenv/sandbox). The
	// caller keeps it open for the environment's life and closes it;
	// Local itself does not use it.
	WorkingDirFile *os.File
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
	// environment the policy let through, and returns the program to run
	// (see Wrapped). execenv/sandbox confines commands this way; an error
	// fails Exec without running anything.
	Wrap func(dir string, argv, env []string) (Wrapped, error)
}

// Wrapped is the program a LocalConfig.Wrap makes of one command.
type Wrapped struct {
	// Argv and Env are the program and its whole environment.
	Argv, Env []string
	// Dir is the directory the program starts in; "" means the
	// command's own.
	Dir string
	// Files are given to the program as file descriptors 3, 4...
	// (exec.Cmd.ExtraFiles).
	Files []*os.File
	// Attr, when set, amends the program's process attributes after
	// Local set its own (a new process group): credentials, a cgroup.
	Attr func(*syscall.SysProcAttr)
	// Release, when set, is called once the program has started or
	// failed to start: it closes what Wrap opened for this command only.
	Release func()
	// Start, when set, starts cmd (cmd.Start) where it sees fit: from a
	// thread it prepared, in a mount namespace of its own. It must not
	// reap the process: the caller waits for it.
	Start func(cmd *exec.Cmd) error
}

// exec is w's command in dir (w.Dir when set), killed when ctx ends,
// without its process attributes: see setup.
func (w Wrapped) exec(ctx context.Context, dir string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, w.Argv[0], w.Argv[1:]...)
	cmd.Dir, cmd.Env, cmd.ExtraFiles = dir, w.Env, w.Files
	if w.Dir != "" {
		cmd.Dir = w.Dir
	}
	return cmd
}

// setup applies w.Attr to cmd's process attributes (creating them).
func (w Wrapped) setup(cmd *exec.Cmd) {
	if w.Attr == nil {
		return
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	w.Attr(cmd.SysProcAttr)
}

// start starts cmd, through w.Start when set.
func (w Wrapped) start(cmd *exec.Cmd) error {
	if w.Start != nil {
		return w.Start(cmd)
	}
	return cmd.Start()
}

// release calls w.Release when set.
func (w Wrapped) release() {
	if w.Release != nil {
		w.Release()
	}
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
