package bench

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"time"
)

// HeapProfileEnv names the file a bench process writes its heap profile to
// (`agentfleet-dev bench --heap-profile`); a worker process writes
// <file>.w<index>. The environment carries it to the worker processes.
const HeapProfileEnv = "AGENTFLEET_BENCH_HEAP_PROFILE"

// profilePeakHeap writes a heap profile to path whenever the heap in use
// has grown a tenth past the largest seen so far, until ctx ends: the file
// holds the profile taken nearest the peak.
func profilePeakHeap(ctx context.Context, path string) {
	var peak uint64
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		if ms.HeapInuse > peak+peak/10 {
			peak = ms.HeapInuse
			if err := writeHeapProfile(path); err != nil {
				fmt.Fprintf(os.Stderr, "bench: heap profile: %v\n", err)
				return
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

// startHeapProfile starts profilePeakHeap on path+suffix when
// HeapProfileEnv is set; the returned stop ends it.
func startHeapProfile(suffix string) (stop func()) {
	path := os.Getenv(HeapProfileEnv)
	if path == "" {
		return func() {}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); profilePeakHeap(ctx, path+suffix) }()
	return func() { cancel(); <-done }
}
