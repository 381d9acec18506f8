package dev

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// goCaches are the user's Go build and module caches, given to the
// sandboxes of dev mode so that a task's go test reuses what the user's
// own builds compiled instead of compiling the standard library again in
// an empty home. A production worker does not share caches unless its
// operator says so (sandbox_writable, sandbox_env).
type goCaches struct {
	writable, readOnly []string
	env                map[string]string
}

// findGoCaches asks go where the caches are; none without go.
func findGoCaches() goCaches {
	out, err := exec.Command("go", "env", "GOCACHE", "GOMODCACHE").Output()
	if err != nil {
		return goCaches{}
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 2 {
		return goCaches{}
	}
	var c goCaches
	c.env = map[string]string{}
	if dir := lines[0]; filepath.IsAbs(dir) && os.MkdirAll(dir, 0o755) == nil {
		c.writable, c.env["GOCACHE"] = []string{dir}, dir
	}
	if dir := lines[1]; filepath.IsAbs(dir) && os.MkdirAll(dir, 0o755) == nil {
		c.readOnly, c.env["GOMODCACHE"] = []string{dir}, dir
	}
	return c
}
