package dev

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// goCacheDir is the Go build cache of dev mode's sandboxes, in the data
// directory.
const goCacheDir = "gocache"

// goCaches are the Go caches given to the sandboxes of dev mode so that a
// task's go test does not compile the standard library again in an empty
// home on every task: a build cache of the fleet's own (DataDir/gocache,
// written by every task of this dev fleet and kept across restarts) and
// the user's module cache, read-only.
//
// The user's GOCACHE is never given to a sandbox: a task could write a
// poisoned entry there and run code in the user's next go build, outside
// any sandbox. The tasks of one dev fleet share its cache, as the tasks
// of a worker share what its operator lists in sandbox_writable. A
// production worker shares no cache unless its operator says so
// (sandbox_writable, sandbox_env).
type goCaches struct {
	writable, readOnly []string
	env                map[string]string
}

// findGoCaches makes the fleet's build cache under dataDir and asks go
// where the user's module cache is; no module cache without go.
func findGoCaches(dataDir string) goCaches {
	c := goCaches{env: map[string]string{}}
	if dir := filepath.Join(dataDir, goCacheDir); filepath.IsAbs(dir) && os.MkdirAll(dir, 0o755) == nil {
		c.writable, c.env["GOCACHE"] = []string{dir}, dir
	}
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		return c
	}
	if dir := strings.TrimSpace(string(out)); filepath.IsAbs(dir) && os.MkdirAll(dir, 0o755) == nil {
		c.readOnly, c.env["GOMODCACHE"] = []string{dir}, dir
	}
	return c
}
