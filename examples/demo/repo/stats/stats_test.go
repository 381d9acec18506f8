package stats

import "testing"

func TestAverage(t *testing.T) {
	tests := []struct {
		in   []float64
		want float64
	}{
		{nil, 0},
		{[]float64{4}, 4},
		{[]float64{1, 2, 3, 4}, 2.5},
	}
	for _, tt := range tests {
		if got := Average(tt.in); got != tt.want {
			t.Errorf("Average(%v) = %v, want %v", tt.in, got, tt.want)
		}
	}
}
