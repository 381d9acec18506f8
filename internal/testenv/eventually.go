package testenv

import (
	"errors"
	"testing"
	"time"
)

// pollEvery is how often Eventually and EventuallyErr check their condition.
const pollEvery = 10 * time.Millisecond

// errNotYet is what Eventually's condition reports while it does not hold.
var errNotYet = errors.New("not yet")

// Eventually waits until cond holds, checking it every 10 ms, and fails tb
// naming what it waited for when timeout passes first. It is the one
// polling loop of the tests: use it where no event says that a state was
// reached (a row in the store, a counter of the server). Call it from the
// test's goroutine, as tb.Fatalf requires.
func Eventually(tb testing.TB, timeout time.Duration, what string, cond func() bool) {
	tb.Helper()
	err := poll(timeout, func() error {
		if cond() {
			return nil
		}
		return errNotYet
	})
	if err != nil {
		tb.Fatalf("waited %s for %s", timeout, what)
	}
}

// EventuallyErr is Eventually for a check that can say why it does not hold
// yet: it waits until check returns nil, and the failure names what and the
// last error check returned (the last state seen, say), which is what one
// wants to read when a wait times out.
func EventuallyErr(tb testing.TB, timeout time.Duration, what string, check func() error) {
	tb.Helper()
	if err := poll(timeout, check); err != nil {
		tb.Fatalf("waited %s for %s: %v", timeout, what, err)
	}
}

// poll calls check every pollEvery until it returns nil, and returns nil;
// or until timeout has passed, and returns check's last error.
func poll(timeout time.Duration, check func() error) error {
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for {
		err := check()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		<-tick.C
	}
}
