package testenv

import (
	"testing"
	"time"
)

// pollEvery is how often Eventually checks its condition.
const pollEvery = 10 * time.Millisecond

// Eventually waits until cond holds, checking it every 10 ms, and fails tb
// naming what it waited for when timeout passes first. It is the one
// polling loop of the tests: use it where no event says that a state was
// reached (a row in the store, a counter of the server).
func Eventually(tb testing.TB, timeout time.Duration, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("waited %s for %s", timeout, what)
		}
		<-tick.C
	}
}
