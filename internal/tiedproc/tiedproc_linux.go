package tiedproc

import "syscall"

// Tied reports whether Start ties a child to this process: Linux has a
// parent-death signal.
const Tied = true

func setDeathSignal(a *syscall.SysProcAttr, sig syscall.Signal) { a.Pdeathsig = sig }
