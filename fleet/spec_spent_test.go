package fleet_test

import (
	"testing"

	"github.com/agentfleet/agentfleet/fleet"
)

func TestLimitsSpent(t *testing.T) {
	l := fleet.Limits{MaxTokens: 100, MaxCostUSD: 2}
	for _, c := range []struct {
		tokens int64
		cost   float64
		want   string
	}{
		{99, 1.99, fleet.SpentNone},
		{100, 0, fleet.SpentTokens},
		{0, 2, fleet.SpentCost},
		{500, 5, fleet.SpentTokens},
	} {
		if got := l.Spent(c.tokens, c.cost); got != c.want {
			t.Errorf("Spent(%d, %g) = %q, want %q", c.tokens, c.cost, got, c.want)
		}
	}
	if got := (fleet.Limits{}).Spent(1e9, 1e9); got != fleet.SpentNone {
		t.Errorf("no limits: Spent = %q, want none", got)
	}
}
