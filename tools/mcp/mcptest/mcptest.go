// Package mcptest runs MCP servers from the npm registry for tests: the
// reference servers, pinned, started with npx. A machine without npx or
// without the registry skips the test with a message, or fails it under
// AGENTFLEET_REQUIRE_INTEGRATION=1 (internal/testenv). Production code
// never imports it.
package mcptest

import (
	"context"
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
	return mcp.ServerConfig{Name: name, Command: "npx", Args: append([]string{"-y", pkg}, args...),
		StartTimeout: 2 * time.Minute}
}

type warmError struct {
	pkg, out string
	err      error
}

func (e *warmError) Error() string {
	return "the npm registry did not serve " + e.pkg + " (" + e.err.Error() + "): " + e.out
}
