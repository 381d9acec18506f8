package testenv

import (
	"slices"
	"testing"
	"time"
)

func TestUntilStartedGrowsTheTimeoutUpToTheLimit(t *testing.T) {
	for _, tc := range []struct {
		name      string
		startsAt  time.Duration // 0: never
		want      time.Duration
		wantCalls []time.Duration
	}{
		{"at once", time.Second, time.Second, []time.Duration{time.Second}},
		{"on the second try", 4 * time.Second, 4 * time.Second, []time.Duration{time.Second, 4 * time.Second}},
		{"never: stops past the limit", 0, 16 * time.Second, []time.Duration{time.Second, 4 * time.Second, 16 * time.Second}},
	} {
		var calls []time.Duration
		got := UntilStarted(t, time.Second, 10*time.Second, func(timeout time.Duration) bool {
			calls = append(calls, timeout)
			return tc.startsAt != 0 && timeout >= tc.startsAt
		})
		if got != tc.want || !slices.Equal(calls, tc.wantCalls) {
			t.Errorf("%s: UntilStarted = %v after calls %v, want %v after %v", tc.name, got, calls, tc.want, tc.wantCalls)
		}
	}
}
