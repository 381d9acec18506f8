// Package report formats order summaries.
package report

import "fmt"

// Line describes one order line for a receipt.
func Line(name string, quantity int) string {
	return fmt.Sprintf("%d x %d", name, quantity)
}
