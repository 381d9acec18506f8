package testenv

import (
	"fmt"
	"runtime"
	"testing"
	"time"
)

func TestEventuallyWaitsForTheCondition(t *testing.T) {
	calls := 0
	Eventually(t, 5*time.Second, "the third call", func() bool { calls++; return calls == 3 })
	if calls != 3 {
		t.Fatalf("cond called %d times, want 3 (it stops once the condition holds)", calls)
	}
}

func TestEventuallyFailsNamingWhatItWaitedFor(t *testing.T) {
	rec := &fatalRecorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		Eventually(rec, 30*time.Millisecond, "a condition that never holds", func() bool { return false })
	}()
	<-done
	if want := "waited 30ms for a condition that never holds"; rec.msg != want {
		t.Fatalf("failure %q, want %q", rec.msg, want)
	}
}

func TestEventuallyErrWaitsForNil(t *testing.T) {
	calls := 0
	EventuallyErr(t, 5*time.Second, "the third call", func() error {
		if calls++; calls < 3 {
			return fmt.Errorf("call %d", calls)
		}
		return nil
	})
	if calls != 3 {
		t.Fatalf("check called %d times, want 3 (it stops once check returns nil)", calls)
	}
}

func TestEventuallyErrFailsWithTheLastError(t *testing.T) {
	rec := &fatalRecorder{TB: t}
	calls := 0
	done := make(chan struct{})
	go func() {
		defer close(done)
		EventuallyErr(rec, 30*time.Millisecond, "a row", func() error { calls++; return fmt.Errorf("state %d", calls) })
	}()
	<-done
	if want := fmt.Sprintf("waited 30ms for a row: state %d", calls); calls < 2 || rec.msg != want {
		t.Fatalf("failure %q after %d calls, want %q after at least 2", rec.msg, calls, want)
	}
}

// fatalRecorder records Fatalf and ends its goroutine, as testing does.
type fatalRecorder struct {
	testing.TB
	msg string
}

func (r *fatalRecorder) Helper() {}

func (r *fatalRecorder) Fatalf(format string, args ...any) {
	r.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}
