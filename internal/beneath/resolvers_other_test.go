//go:build !linux

package beneath

import "testing"

// Resolvers: only the walk exists here.
var Resolvers = []struct {
	Name string
	Set  func(t *testing.T)
}{{"walk", func(*testing.T) {}}}
