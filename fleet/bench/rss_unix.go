//go:build unix

package bench

import (
	"os"
	"runtime"
	"syscall"
	"time"
)

// peakRSSMB is the peak resident set size of this process.
func peakRSSMB() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return maxrssMB(int64(ru.Maxrss)) //nolint:unconvert // int32 on 32-bit platforms
}

// childPeakRSSMB is the peak resident set size of an exited child process.
func childPeakRSSMB(ps *os.ProcessState) float64 {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok || ru == nil {
		return 0
	}
	return maxrssMB(int64(ru.Maxrss)) //nolint:unconvert // int32 on 32-bit platforms
}

// maxrssMB converts rusage's ru_maxrss: kilobytes on Linux and the BSDs,
// bytes on macOS.
func maxrssMB(maxrss int64) float64 {
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		return float64(maxrss) / (1 << 20)
	}
	return float64(maxrss) / 1024
}

// cpuSeconds is the CPU time (user and system) this process has used.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}
