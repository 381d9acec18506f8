package cart

import "testing"

func TestTotal(t *testing.T) {
	items := []Item{{"pen", 150, 2}, {"notebook", 400, 1}}
	if got := Total(items, 0); got != 700 {
		t.Errorf("Total without discount = %d, want 700", got)
	}
	if got := Total(items, 10); got != 630 {
		t.Errorf("Total with 10%% off = %d, want 630", got)
	}
}
