package execenv

import (
	"os"
	"os/exec"
	"sync/atomic"
)

// rgLookup is the outcome of looking rg up on one value of PATH.
type rgLookup struct {
	path string // $PATH searched
	rg   string // where rg is, "" when it is not there
}

// lastRgLookup holds the latest lookup: environments are built per task
// and PATH rarely changes, so one entry answers nearly every call.
var lastRgLookup atomic.Pointer[rgLookup]

// ripgrepOnPath returns the path of rg on $PATH, or "" when there is none.
// A lookup walks PATH with a stat per entry, so the answer is kept for as
// long as PATH keeps its value: an rg installed later in the life of the
// process is seen once PATH changes. Safe for concurrent use.
func ripgrepOnPath() string {
	path := os.Getenv("PATH")
	if last := lastRgLookup.Load(); last != nil && last.path == path {
		return last.rg
	}
	rg, err := exec.LookPath("rg")
	if err != nil {
		rg = ""
	}
	lastRgLookup.Store(&rgLookup{path: path, rg: rg})
	return rg
}
