//go:build !unix

package tasksandbox_test

import (
	"os"
	"testing"
)

// ownerUID skips: files have no owning uid here.
func ownerUID(t *testing.T, _ os.FileInfo) uint32 {
	t.Skip("file owners (uids) are Unix only")
	return 0
}
