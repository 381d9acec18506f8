package search

import "testing"

func TestTopN(t *testing.T) {
	top := newTopN(3, func(a, b int) bool { return a < b })
	for _, v := range []int{9, 1, 8, 2, 7, 3, 6} {
		top.add(v)
	}
	if got := top.sorted(); len(got) != 3 || got[0] != 1 || got[1] != 2 || got[2] != 3 || !top.truncated() || top.seen != 7 {
		t.Fatalf("topN kept %v (seen %d)", got, top.seen)
	}
}
