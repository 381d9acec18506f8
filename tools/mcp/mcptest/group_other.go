//go:build !unix

package mcptest

import "os/exec"

// ownGroup does nothing where there are no process groups.
func ownGroup(*exec.Cmd) {}

// killGroup kills cmd alone (a server npx started may outlive it).
func killGroup(cmd *exec.Cmd) { _ = cmd.Process.Kill() }
