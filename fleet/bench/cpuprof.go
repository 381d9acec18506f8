package bench

import (
	"fmt"
	"os"
	"runtime/pprof"
)

// CPUProfileEnv names the file each worker process of `agentfleet-dev bench
// --worker-processes --cpuprofile FILE` writes its CPU profile to, as
// <file>.w<index>; the environment carries it to the worker processes.
const CPUProfileEnv = "AGENTFLEET_BENCH_CPU_PROFILE"

// startCPUProfile profiles this process into path+suffix from now until the
// returned stop, when CPUProfileEnv is set; a profile that cannot start is
// reported on stderr and the run goes on without it.
func startCPUProfile(suffix string) (stop func()) {
	path := os.Getenv(CPUProfileEnv)
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path + suffix)
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench: cpu profile: %v\n", err)
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		fmt.Fprintf(os.Stderr, "bench: cpu profile: %v\n", err)
		_ = f.Close()
		return func() {}
	}
	return func() { pprof.StopCPUProfile(); _ = f.Close() }
}
