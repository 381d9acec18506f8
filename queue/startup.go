package queue

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// MinServerVersion is the oldest nats-server the queue works with. Older
// servers ignore the reason of a term (2.9 takes `+TERM reason` as a plain
// nak), so a poison task message would go round until MaxDeliver instead of
// failing at once with its reason.
const MinServerVersion = "2.10.0"

// checkServerVersion refuses a server older than MinServerVersion.
func checkServerVersion(version string) error {
	if version == "" {
		return nil // not connected yet; the first request will say so
	}
	have, ok := parseVersion(version)
	want, _ := parseVersion(MinServerVersion)
	if ok && compareVersions(have, want) >= 0 {
		return nil
	}
	return fmt.Errorf("queue: nats-server %s is too old: agentfleet needs %s or later (older servers ignore a "+
		"term's reason, so poison tasks would be retried instead of failing at once). Upgrade the server "+
		"(Debian 12 packages 2.9; use a release binary or the nats:2.10 image or newer)", version, MinServerVersion)
}

// parseVersion reads major.minor.patch, ignoring a pre-release or build
// suffix ("2.11.0-RC.1").
func parseVersion(v string) ([3]int, bool) {
	var out [3]int
	v = strings.TrimPrefix(v, "v")
	if i := strings.IndexAny(v, "-+"); i >= 0 {
		v = v[:i]
	}
	parts := strings.Split(v, ".")
	if len(parts) != 3 {
		return out, false
	}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return out, false
		}
		out[i] = n
	}
	return out, true
}

func compareVersions(a, b [3]int) int {
	for i := range a {
		if a[i] != b[i] {
			return a[i] - b[i]
		}
	}
	return 0
}

// startupPatience bounds how long Open and NewPuller retry while a
// JetStream cluster is still forming (electing its meta leader, placing a
// new replicated stream): long enough for a cluster started together with
// the fleet, short enough that a cluster that can never place the streams
// (replicas 3 on two nodes) is reported.
const startupPatience = 2 * time.Minute

// startupAttemptTimeout bounds one attempt, whatever ctx's deadline: a
// request to a cluster without a leader is never answered.
const startupAttemptTimeout = 10 * time.Second

// retryWhileForming runs op until it succeeds, fails for a reason a
// forming cluster does not explain, startupPatience has passed, or ctx ends.
func retryWhileForming(ctx context.Context, op func(context.Context) error) error {
	deadline := time.Now().Add(startupPatience)
	delay := 100 * time.Millisecond
	for {
		actx, cancel := context.WithTimeout(ctx, startupAttemptTimeout)
		err := op(actx)
		cancel()
		if err == nil || !clusterForming(err) || time.Now().Add(delay).After(deadline) {
			return err
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		delay = min(2*delay, 5*time.Second)
	}
}

// JetStream API error codes a forming or recovering cluster answers with.
const (
	errCodeNoPeers         = 10005 // no suitable peers for placement (peers not yet known online)
	errCodeClusterNotAvail = 10008 // JetStream system temporarily unavailable
	errCodeNotLeader       = 10009 // JetStream cluster can not handle request
)

// clusterForming reports errors that a JetStream cluster still electing
// leaders or placing streams answers with, and that go away by themselves.
func clusterForming(err error) bool {
	if apiErr, ok := errors.AsType[*jetstream.APIError](err); ok {
		switch apiErr.ErrorCode {
		case errCodeNoPeers, errCodeClusterNotAvail, errCodeNotLeader:
			return true
		}
		return false
	}
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) ||
		errors.Is(err, nats.ErrNoResponders) || errors.Is(err, jetstream.ErrNoStreamResponse)
}
