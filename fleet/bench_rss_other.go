//go:build !unix

package fleet

import "os"

// peakRSSMB is not measured on this platform.
func peakRSSMB() float64 { return 0 }

// childPeakRSSMB is not measured on this platform.
func childPeakRSSMB(*os.ProcessState) float64 { return 0 }
