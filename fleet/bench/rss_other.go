//go:build !unix

package bench

import "os"

// peakRSSMB is not measured on this platform.
func peakRSSMB() float64 { return 0 }

// childPeakRSSMB is not measured on this platform.
func childPeakRSSMB(*os.ProcessState) float64 { return 0 }

// cpuSeconds is not measured on this platform.
func cpuSeconds() float64 { return 0 }
