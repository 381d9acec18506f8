//go:build unix

package dirlock_test

import (
	"testing"

	"github.com/agentfleet/agentfleet/internal/dirlock"
)

// A held directory cannot be locked again until its holder closes it.
func TestLockIsExclusiveUntilClosed(t *testing.T) {
	dir := t.TempDir()
	first, err := dirlock.Lock(dir)
	if err != nil {
		t.Fatal(err)
	}
	if second, err := dirlock.Lock(dir); err == nil {
		_ = second.Close()
		t.Fatal("a held directory was locked a second time")
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	again, err := dirlock.Lock(dir)
	if err != nil {
		t.Fatalf("a released directory cannot be locked: %v", err)
	}
	_ = again.Close()
}
