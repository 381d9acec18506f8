package inventory

import "testing"

func TestStock(t *testing.T) {
	var s Stock
	s.Add(3)
	s.Add(-1)
	if got := s.Count(); got != 2 {
		t.Fatalf("Count() = %d, want 2", got)
	}
}
