//go:build !unix

package sandbox

import "io/fs"

// links is 1: this system does not say (and bubblewrap does not run here).
func links(fs.FileInfo) uint64 { return 1 }
