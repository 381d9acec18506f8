//go:build !linux

package bench

import "os/exec"

// setParentDeathSignal does nothing here: a bench that dies without
// stopping its worker processes leaves them running.
func setParentDeathSignal(*exec.Cmd) {}
