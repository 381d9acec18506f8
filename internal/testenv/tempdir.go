package testenv

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// SearchableTempDir is tb.TempDir() with every directory above it, up
// to the system's temporary directory, searchable by every user (mode
// 0755): a root worker's sandboxes run as uids of their own, and
// bubblewrap resolves the workspace's path as that uid (see
// execenv/sandbox), while testing makes its directories 0700.
func SearchableTempDir(tb testing.TB) string {
	tb.Helper()
	dir := tb.TempDir()
	Searchable(tb, dir)
	return dir
}

// Searchable makes the directories above dir that lie under the
// system's temporary directory mode 0755 (see SearchableTempDir).
func Searchable(tb testing.TB, dir string) {
	tb.Helper()
	tmp := filepath.Clean(os.TempDir())
	for d := filepath.Dir(dir); strings.HasPrefix(d, tmp+string(filepath.Separator)); d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil {
			tb.Fatal(err)
		}
	}
}
