package pgcluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/agentfleet/agentfleet/internal/tiedproc"
)

// ErrNoBinaries means initdb and postgres were found neither on PATH nor
// under /usr/lib/postgresql/*/bin.
var ErrNoBinaries = errors.New("pgcluster: initdb and postgres not found on PATH or under /usr/lib/postgresql/*/bin; install PostgreSQL (Debian: apt-get install postgresql) or set AGENTFLEET_TEST_DATABASE_URL")

// ErrUnsupported means the throwaway cluster cannot run on this operating
// system: it needs Unix signals and credentials (Windows has neither).
var ErrUnsupported = errors.New("pgcluster: a throwaway Postgres cluster needs a Unix system (Linux or macOS); set AGENTFLEET_TEST_DATABASE_URL to a server instead")

// Cluster is a throwaway Postgres server: a data directory made by initdb in
// a temporary directory and a postgres process, a child of this process,
// listening on 127.0.0.1 on a free port. It trusts local connections as the
// superuser "postgres". Running as root, it runs as the postgres system user
// (or nobody). Stop it with Close; if this process dies first, the server
// gets SIGQUIT (parent-death signal) and exits too.
type Cluster struct {
	Port int

	dir, bin string
	cred     *credential // nil: this process's own user

	mu   sync.Mutex
	proc *exec.Cmd
	done <-chan struct{} // closed when proc exits
}

// StartCluster runs initdb and starts the server.
func StartCluster(ctx context.Context) (*Cluster, error) {
	bin, err := findBinaries()
	if err != nil {
		return nil, err
	}
	c := &Cluster{bin: bin}
	if c.cred, err = unprivilegedCredential(); err != nil {
		return nil, err
	}
	if c.dir, err = os.MkdirTemp("", "agentfleet-pg-"); err != nil {
		return nil, err
	}
	if err := c.initdb(ctx); err != nil {
		_ = os.RemoveAll(c.dir)
		return nil, err
	}
	for attempt := 0; ; attempt++ {
		if c.Port, err = freePort(); err == nil {
			if err = c.Start(ctx); err == nil {
				return c, nil
			}
		}
		if attempt == 2 || ctx.Err() != nil {
			_ = os.RemoveAll(c.dir)
			return nil, err
		}
	}
}

// DSN returns the URL of database db on the cluster.
func (c *Cluster) DSN(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", c.Port, db)
}

func (c *Cluster) initdb(ctx context.Context) error {
	if err := chownTo(c.dir, c.cred); err != nil {
		return err
	}
	cmd := c.command(ctx, "initdb", "-D", c.dataDir(), "-U", "postgres", "-A", "trust",
		"-E", "UTF8", "--locale=C", "--no-sync")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("pgcluster: initdb failed: %w\n%s", err, out)
	}
	return nil
}

// Start starts the server (again, after Stop) and waits until it accepts
// connections.
func (c *Cluster) Start(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.proc != nil {
		return errors.New("pgcluster: cluster already running")
	}
	logPath := filepath.Join(c.dir, "postgres.log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o666)
	if err != nil {
		return err
	}
	cmd := c.command(context.Background(), "postgres", "-D", c.dataDir(), "-p", strconv.Itoa(c.Port),
		"-k", c.dir, "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "full_page_writes=off",
		"-c", "max_connections=300", "-c", "shared_buffers=64MB")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	done, err := tiedproc.Start(cmd, syscall.SIGQUIT, logFile)
	if err != nil {
		_ = logFile.Close()
		return fmt.Errorf("pgcluster: start postgres: %w", err)
	}
	c.proc, c.done = cmd, done
	if err := c.waitReady(ctx, done); err != nil {
		c.stopLocked(syscall.SIGQUIT)
		log, _ := os.ReadFile(logPath)
		return fmt.Errorf("pgcluster: postgres did not become ready: %w\n%s", err, tail(log, 2000))
	}
	return nil
}

// waitReady polls until the server accepts a connection, it exits, or 60 s pass.
func (c *Cluster) waitReady(ctx context.Context, exited <-chan struct{}) error {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		conn, err := pgconn.Connect(ctx, c.DSN("postgres"))
		if err == nil {
			return conn.Close(ctx)
		}
		select {
		case <-exited:
			return errors.New("the server exited")
		case <-ctx.Done():
			return fmt.Errorf("%w (last error: %v)", ctx.Err(), err)
		case <-tick.C:
		}
	}
}

// Stop shuts the server down (fast shutdown: sessions are disconnected) and
// waits for it to exit. The data directory stays for Start.
func (c *Cluster) Stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stopLocked(syscall.SIGINT)
}

func (c *Cluster) stopLocked(sig syscall.Signal) {
	if c.proc == nil {
		return
	}
	_ = c.proc.Process.Signal(sig)
	select {
	case <-c.done:
	case <-time.After(30 * time.Second):
		_ = c.proc.Process.Kill()
		<-c.done
	}
	c.proc = nil
}

// Restart stops and starts the server on the same port and data.
func (c *Cluster) Restart(ctx context.Context) error {
	c.Stop()
	return c.Start(ctx)
}

// Close stops the server and removes its directory.
func (c *Cluster) Close() {
	c.Stop()
	_ = os.RemoveAll(c.dir)
}

func (c *Cluster) dataDir() string { return filepath.Join(c.dir, "data") }

func (c *Cluster) command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, filepath.Join(c.bin, name), args...)
	cmd.Dir = c.dir
	cmd.Env = append(os.Environ(), "LC_ALL=C", "TZ=UTC")
	cmd.SysProcAttr = procAttr(c.cred)
	return cmd
}

// findBinaries returns the directory holding initdb and postgres.
func findBinaries() (string, error) {
	if p, err := exec.LookPath("initdb"); err == nil {
		dir := filepath.Dir(p)
		if resolved, err := filepath.EvalSymlinks(p); err == nil {
			dir = filepath.Dir(resolved) // /usr/local/bin/initdb -> the real bin dir with postgres
		}
		if _, err := os.Stat(filepath.Join(dir, "postgres")); err == nil {
			return dir, nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	return "", ErrNoBinaries
}

func version(binDir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return v
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func tail(b []byte, n int) []byte {
	b = bytes.TrimSpace(b)
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}
