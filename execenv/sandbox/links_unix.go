//go:build unix

package sandbox

import (
	"io/fs"
	"syscall"
)

// links is a file's link count (1 where the system does not say).
func links(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink) //nolint:unconvert // uint16 on darwin
	}
	return 1
}
