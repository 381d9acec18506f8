package chaos

import (
	"context"
	"errors"
	"testing"
)

// A removal that fails while a killed worker's processes still write is
// tried again until it succeeds; one that keeps failing reports its error
// once the context ends.
func TestRemoveWhenQuietTriesUntilTheDirectoryIsQuiet(t *testing.T) {
	busy := errors.New("directory not empty")
	calls := 0
	err := removeWhenQuiet(context.Background(), func() error {
		calls++
		if calls < 3 {
			return busy
		}
		return nil
	})
	if err != nil || calls != 3 {
		t.Fatalf("removeWhenQuiet = %v after %d calls; want nil after 3", err, calls)
	}

	ctx, cancel := context.WithCancel(context.Background())
	calls = 0
	err = removeWhenQuiet(ctx, func() error {
		calls++
		cancel()
		return busy
	})
	if !errors.Is(err, busy) || calls != 1 {
		t.Fatalf("removeWhenQuiet = %v after %d calls; want the removal's error after 1", err, calls)
	}
}
