package queue

import (
	"slices"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
)

// Level hints. A worker's loop learns which priority levels and keys of a
// queue hold messages from the stream's per-subject counts, read at most
// every keyDiscoveryEvery (levelloop.go). So that a task on a subject the
// loop does not ask every round (another level, another tenant's key)
// starts at the next round, not after the next reading, whoever publishes
// it also sends a hint: a core NATS message on <prefix>.levels.<queue>,
// with no body and not stored, at most once every levelHintEvery per
// subject per Client. Every loop of the queue reads the counts at its next
// round after a hint. A lost hint costs at most keyDiscoveryEvery, as
// before hints. The subjects a loop knows from its start send none: the fixed
// levels' unkeyed ones (children) and the default tenant's key at
// priorities 0 and 1, which carry most of a fleet's work.

// levelHintEvery bounds the hints a Client sends for one subject.
const levelHintEvery = time.Second

// levelsToken is the subject token of level hints.
const levelsToken = "levels"

// Levels returns the subject of a queue's level hints: <prefix>.levels.<queue>.
func (s Subjects) Levels(queue string) string { return s.prefix + "." + levelsToken + "." + queue }

// AllLevels is the subject of every queue's level hints: <prefix>.levels.>.
func (s Subjects) AllLevels() string { return s.prefix + "." + levelsToken + ".>" }

// hint tells the loops of to's queue that a message was stored on subject,
// when loops do not ask subject every round and this Client has not said
// so of subject within levelHintEvery. A hint that cannot be sent is
// dropped.
func (c *Client) hint(to Target, subject string) {
	if !to.hinted() {
		return
	}
	now := time.Now().UnixNano()
	if last, ok := c.hinted.Load(subject); ok && now-last.(int64) < int64(levelHintEvery) {
		return
	}
	c.hinted.Store(subject, now)
	_ = c.nc.Publish(c.subj.Levels(to.queue), nil) // best effort: the periodic reading covers a loss
}

// hinted reports whether a message to t needs a hint: not for a worker's
// subject, a fixed level's unkeyed one, or a key every loop makes at its
// start (primed).
func (t Target) hinted() bool {
	switch {
	case t.workerID != "":
		return false
	case t.key == "":
		return !slices.Contains(fixedLevels, t.priority)
	}
	return t.front || !primed(t.priority, t.key)
}

// watchHints sets *flag on every hint for queue until the returned
// subscription is drained; a loop that cannot subscribe (a restricted
// user) goes on with the periodic reading alone.
func (c *Client) watchHints(queue string, flag *atomic.Bool) *nats.Subscription {
	sub, err := c.nc.Subscribe(c.subj.Levels(queue), func(*nats.Msg) { flag.Store(true) })
	if err != nil {
		return nil
	}
	return sub
}
