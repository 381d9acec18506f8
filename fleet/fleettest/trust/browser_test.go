package trust_test

import (
	"context"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/agentfleet/agentfleet/internal/browsertest"
)

// eval runs a script in the page, awaiting its promise.
func eval[T any](t *testing.T, b *browsertest.Browser, what, script string) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.Ctx, browsertest.StepWait)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](script, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return v
}
