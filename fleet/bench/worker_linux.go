package bench

import (
	"os/exec"
	"syscall"
)

// setParentDeathSignal kills a bench worker process when the bench dies
// without stopping it.
func setParentDeathSignal(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
