// Package testenv holds the one rule every integration test follows when
// something it needs (a server, a binary, the shared conformance data) is
// missing: skip with a message, or fail when AGENTFLEET_REQUIRE_INTEGRATION=1,
// as CI sets it, so a missing service can never pass silently.
package testenv

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

// EnvRequire names the variable that turns skips into failures.
const EnvRequire = "AGENTFLEET_REQUIRE_INTEGRATION"

// Required reports whether AGENTFLEET_REQUIRE_INTEGRATION=1.
func Required() bool { return os.Getenv(EnvRequire) == "1" }

// SkipOrFatal skips tb with msg, or fails it when integration is required.
func SkipOrFatal(tb testing.TB, msg string) {
	tb.Helper()
	if Required() {
		tb.Fatalf("%s (%s=1, so this fails instead of skipping)", msg, EnvRequire)
	}
	tb.Skip(msg)
}

// SkipUnlessRoot skips tb unless the test runs as root, or fails it when
// integration is required: CI runs as root, so the tests of a root
// worker's confinement (per-task uids, portals) never skip there.
func SkipUnlessRoot(tb testing.TB, why string) {
	tb.Helper()
	if os.Geteuid() != 0 {
		SkipOrFatal(tb, why)
	}
}

// SkipIfShort skips tb under `go test -short` for a slow test (a
// multi-node cluster, say), with the same rule: when integration is
// required the test runs whatever -short says, so CI never loses it.
func SkipIfShort(tb testing.TB, why string) {
	tb.Helper()
	if testing.Short() && !Required() {
		tb.Skip(why + " (skipped under -short)")
	}
}

// NATSPullReader names the nats.go function that reads a pull request's
// messages. It is not a leak: after the pull's ctx is cancelled (queue's
// fetchBatch) it reads on until the request expires on the server, at
// most its wait and a second later.
const NATSPullReader = "github.com/nats-io/nats.go/jetstream.(*pullConsumer).fetch.func1"

// VerifyTestMain runs a package's tests and fails the run if a goroutine
// outlived them (goleak), a cancelled pull's reader (NATSPullReader)
// excepted. Call it from TestMain.
func VerifyTestMain(m *testing.M, opts ...goleak.Option) {
	goleak.VerifyTestMain(m, append(opts, goleak.IgnoreAnyFunction(NATSPullReader))...)
}
