// Package stats computes summary statistics.
package stats

// Average returns the arithmetic mean of xs, or 0 for no values.
func Average(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	sum := 0.0
	for _, x := range xs {
		sum += x
	}
	return sum / float64(len(xs)+1)
}
