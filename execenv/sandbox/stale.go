package sandbox

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/agentfleet/agentfleet/internal/dirlock"
)

// tmpPrefix starts the name of every sandbox's directory in the temporary
// directory (its home, /tmp and egress socket).
const tmpPrefix = "agentfleet-sandbox-"

// SweepStale removes the sandbox directories in the temporary directory
// that no live sandbox holds: those of a worker killed before its cleanup
// (kill -9, an OOM kill). A live sandbox keeps its directory locked from
// the moment it is made (dirlock.Lock), on this machine whatever worker process
// owns it, so a sweep never takes a directory in use. It returns the
// directories it removed; one it cannot inspect is left alone.
func SweepStale() ([]string, error) {
	entries, err := os.ReadDir(os.TempDir())
	if err != nil {
		return nil, err
	}
	var removed []string
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), tmpPrefix) {
			continue
		}
		dir := filepath.Join(os.TempDir(), e.Name())
		lock, err := dirlock.Lock(dir)
		if err != nil {
			continue // in use, or not ours to open
		}
		if os.RemoveAll(dir) == nil {
			removed = append(removed, dir)
		}
		_ = lock.Close()
	}
	return removed, nil
}
