package beneath

import "testing"

// Resolvers lets the black-box tests run every case through openat2 and
// through the walk.
var Resolvers = []struct {
	Name string
	Set  func(t *testing.T)
}{
	{"openat2", func(*testing.T) {}},
	{"walk", func(t *testing.T) {
		was := openat2Missing.Swap(true)
		t.Cleanup(func() { openat2Missing.Store(was) })
	}},
}
