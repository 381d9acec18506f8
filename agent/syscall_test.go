package agent_test

import "syscall"

// syscallZero is signal 0: it checks that a process exists.
var syscallZero = syscall.Signal(0)
