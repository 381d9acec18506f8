package execenv

import "golang.org/x/sys/unix"

// waitExited blocks until process pid has exited, without reaping it: the
// pid (and so the process group id) cannot be reused until cmd.Wait, which
// makes killing the leftover group safe.
func waitExited(pid int) {
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err != unix.EINTR {
			return
		}
	}
}
