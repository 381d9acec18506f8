//go:build !linux

package bench

import (
	"errors"
	"runtime"
)

// ServerCPU reads process times from /proc, which only Linux has.
func ServerCPU(int) (float64, error) {
	return 0, errors.New("bench: a server's CPU is read from /proc, which " + runtime.GOOS + " does not have")
}
