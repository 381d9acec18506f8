// Package cart prices a shopping cart.
package cart

// Item is one line of a cart.
type Item struct {
	Name      string
	UnitCents int
	Quantity  int
}

// Total returns the price of the items in cents after a discount given in
// percent (10 means 10 % off), rounded down.
func Total(items []Item, discountPercent int) int {
	sum := 0
	for _, it := range items {
		sum += it.UnitCents
	}
	return sum * (100 - discountPercent) / 100
}
