//go:build unix

package tasksandbox_test

import (
	"os"
	"syscall"
	"testing"
)

// ownerUID is the uid owning fi.
func ownerUID(_ *testing.T, fi os.FileInfo) uint32 { return fi.Sys().(*syscall.Stat_t).Uid }
