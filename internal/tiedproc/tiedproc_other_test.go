//go:build !linux

package tiedproc

import (
	"os/exec"
	"syscall"
	"testing"
)

// checkTied: no parent-death signal exists here, and Tied says so.
func checkTied(t *testing.T, _ *exec.Cmd, _ syscall.Signal) {
	t.Helper()
	if Tied {
		t.Fatal("Tied is true on a system without a parent-death signal")
	}
}
