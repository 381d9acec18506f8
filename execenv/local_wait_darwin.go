package execenv

import "golang.org/x/sys/unix"

// waitExited blocks until process pid has exited, without reaping it (a
// kqueue NOTE_EXIT event): the pid, and so the process group id, cannot be
// reused until cmd.Wait, which makes killing the leftover group safe. A
// process that exited before the watch began answers ESRCH: exited too.
func waitExited(pid int) {
	kq, err := unix.Kqueue()
	if err != nil {
		return
	}
	defer unix.Close(kq)
	watch := []unix.Kevent_t{{Ident: uint64(pid), Filter: unix.EVFILT_PROC, Flags: unix.EV_ADD | unix.EV_ONESHOT, Fflags: unix.NOTE_EXIT}}
	events := make([]unix.Kevent_t, 1)
	for {
		n, err := unix.Kevent(kq, watch, events, nil)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n > 0 {
			return
		}
	}
}
