package report

import "testing"

func TestLineMentionsQuantity(t *testing.T) {
	if got := Line("pen", 2); got == "" {
		t.Fatal("empty line")
	}
}
