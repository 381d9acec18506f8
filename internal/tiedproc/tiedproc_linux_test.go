package tiedproc

import (
	"os/exec"
	"syscall"
	"testing"
)

// checkTied fails unless cmd was started with sig as its parent-death
// signal.
func checkTied(t *testing.T, cmd *exec.Cmd, sig syscall.Signal) {
	t.Helper()
	if got := cmd.SysProcAttr.Pdeathsig; got != sig || !Tied {
		t.Fatalf("parent-death signal %v (Tied %v), want %v", got, Tied, sig)
	}
}
