// Package mcptest runs MCP servers from the npm registry for tests: the
// reference servers, pinned, started with npx, on stdio (NPX) or as HTTP
// servers on a loopback port (Serve). A machine without npx or
// without the registry skips the test with a message, or fails it under
// AGENTFLEET_REQUIRE_INTEGRATION=1 (internal/testenv). Production code
// never imports it.
package mcptest

import (
	"bytes"
	"context"
	"net"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/agentfleet/agentfleet/internal/testenv"
	"github.com/agentfleet/agentfleet/tools/mcp"
)

// Pinned npm packages of the reference servers; .ci/run warms the same
// versions into npm's cache.
const (
	Everything = "@modelcontextprotocol/server-everything@2026.8.31"
	Filesystem = "@modelcontextprotocol/server-filesystem@2026.8.31"
)

var warmed sync.Map // package -> error

// NPX returns the configuration of a stdio server run as `npx -y pkg
// args...`, after making sure npx is installed and the package is in npm's
// cache (downloaded once per process).
func NPX(tb testing.TB, name, pkg string, args ...string) mcp.ServerConfig {
	tb.Helper()
	available(tb, pkg)
	return mcp.ServerConfig{Name: name, Command: "npx", Args: append([]string{"-y", pkg}, args...),
		StartTimeout: 2 * time.Minute}
}

// Serve runs `npx -y pkg args...` as an HTTP server on a free loopback
// port, passed to it as the environment variable PORT (as the reference
// servers read it), waits until the port accepts connections, and returns
// its base URL, "http://127.0.0.1:PORT". The server's process group is
// killed when the test ends. Like NPX, it skips (or fails) without npx or
// the registry.
func Serve(tb testing.TB, pkg string, args ...string) string {
	tb.Helper()
	available(tb, pkg)
	port := freePort(tb)
	cmd := exec.Command("npx", append([]string{"-y", pkg}, args...)...)
	cmd.Env = append(os.Environ(), "PORT="+port)
	ownGroup(cmd)
	out := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		tb.Fatalf("starting npx %s: %v", pkg, err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	tb.Cleanup(func() {
		killGroup(cmd)
		<-exited
	})
	addr := net.JoinHostPort("127.0.0.1", port)
	deadline := time.After(2 * time.Minute)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		d := net.Dialer{Timeout: time.Second}
		if conn, err := d.DialContext(context.Background(), "tcp", addr); err == nil {
			_ = conn.Close()
			return "http://" + addr
		}
		select {
		case <-exited:
			tb.Fatalf("npx %s exited before listening on %s; its output: %s", pkg, addr, out)
		case <-deadline:
			tb.Fatalf("npx %s did not listen on %s within 2m; its output: %s", pkg, addr, out)
		case <-tick.C:
		}
	}
}

// available makes sure npx is installed and pkg is in npm's cache
// (downloaded once per process), or skips the test.
func available(tb testing.TB, pkg string) {
	tb.Helper()
	if _, err := exec.LookPath("npx"); err != nil {
		testenv.SkipOrFatal(tb, "npx is not installed (install node and npm to run the npm MCP servers)")
	}
	v, _ := warmed.LoadOrStore(pkg, sync.OnceValue(func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		out, err := exec.CommandContext(ctx, "npm", "cache", "add", pkg).CombinedOutput()
		if err != nil {
			return &warmError{pkg: pkg, out: string(out), err: err}
		}
		return nil
	}))
	if err := v.(func() error)(); err != nil {
		testenv.SkipOrFatal(tb, err.Error())
	}
}

// freePort is a loopback TCP port that was free a moment ago.
func freePort(tb testing.TB) string {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return port
}

// lockedBuffer is a process's output, written and read concurrently.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

type warmError struct {
	pkg, out string
	err      error
}

func (e *warmError) Error() string {
	return "the npm registry did not serve " + e.pkg + " (" + e.err.Error() + "): " + e.out
}
