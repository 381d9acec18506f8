//go:build unix

package execenv

import (
	"os/exec"
	"syscall"
	"time"
)

// ownGroup makes cmd the leader of a new process group, so that a timeout
// or a cancel reaches every process the command started.
func ownGroup(cmd *exec.Cmd) error {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return nil
}

// terminateGroup sends SIGTERM to the group, and SIGKILL if the shell has
// not exited after KillGrace.
func terminateGroup(pgid int, exited <-chan struct{}) {
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	grace := time.NewTimer(KillGrace)
	defer grace.Stop()
	select {
	case <-exited:
	case <-grace.C:
	}
	killGroup(pgid)
}

// killGroup sends SIGKILL to every process of the group.
func killGroup(pgid int) { _ = syscall.Kill(-pgid, syscall.SIGKILL) }
