package queue

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Concurrency keys. A message published with a key (ToQueueFor) goes to
// <prefix>.tasks.<queue>.<level>.<key> (level: priority.go), and every
// such subject has its own durable consumer, made by the first worker that
// sees a message on it (keyConsumer) and shared by all workers:
//
//   - the key's maximum of running tasks is the consumer's MaxAckPending.
//     A task's message stays unacknowledged while it runs (it is acked when
//     the task ends or parks), so the server itself counts the key's running
//     tasks across the fleet and delivers nothing more at the maximum: the
//     key's messages stay queued, spend no delivery, and other keys' consumers
//     are not affected. A key's tasks at one priority level share the
//     maximum only at that level: the maximum holds per (level, key), and
//     keys are set per tenant or repository, whose tasks mostly share one;
//   - free slots go to keys in proportion to their weights: each worker's loop
//     of a queue keeps a pass per key (stride scheduling) and, within a level,
//     gives the slots of a round to the keys with the lowest pass first, each
//     at most its weighted share; a key that gets n messages advances its pass
//     by n/weight. A key new to the loop starts at the lowest pass of the keys
//     it knows, so it is served next, not after the backlog of the others.
//
// Front lanes. A task a pause held (fleet/internal/holds) had its place in
// its key's queue: the worker that held it had taken every message queued
// before it. When the pause ends its start is published again, on the
// key's front lane, <prefix>.tasks.<queue>.<level>.<key>.front (Front), a
// subject with a consumer of its own that a loop asks before any other
// source of the level: so released tasks start before what was queued at
// their level while they were held, in the order they were held. A key
// with a maximum has none (KeyCapped): its maximum is counted on its own
// consumer, so its released tasks go back to its subject, behind what was
// queued meanwhile, and the maximum holds.
//
// A worker learns which levels and keys have messages from the stream's
// per-subject counts (one STREAM.INFO with a subject filter, at most every
// keyDiscoveryEvery per queue). Messages without a key (children, and
// everything published before keys) are one more candidate of their level,
// with weight 1 and no maximum.

// KeyLimit is an operator's setting for one concurrency key.
type KeyLimit struct {
	// MaxRunning is the most tasks of the key that run at once across the
	// fleet (0: no maximum beyond Config.MaxAckPending).
	MaxRunning int
	// Weight is the key's share of free slots relative to other keys (0: 1).
	Weight int
}

// CheckConcurrencyKey is the rule for a concurrency key: a subject token
// (1 to 128 ASCII letters, digits, '-' or '_').
func CheckConcurrencyKey(key string) error { return checkToken("concurrency key", key) }

// ToQueueFor targets the level of priority in the shared queue name, under
// the given concurrency key ("": no key, as ToQueueAt).
func ToQueueFor(name string, priority int, key string) Target {
	t := ToQueueAt(name, priority)
	t.key = key
	return t
}

// TasksKey returns the subject of one key at one priority level of a
// queue: <prefix>.tasks.<queue>.<level>.<key>.
func (s Subjects) TasksKey(queue string, prio int, key string) string {
	return s.Tasks(queue) + "." + levelToken(prio) + "." + key
}

// maxRunningMeta is the consumer metadata that marks a key with a maximum
// (KeyCapped).
const maxRunningMeta = "agentfleet-max-running"

// KeyCapped reports whether the concurrency key to targets has a maximum
// of running tasks, as its consumer, made by the workers, says: a key
// whose consumer does not exist (no worker served it within the last hour)
// has none yet. A target without a key has none.
func (c *Client) KeyCapped(ctx context.Context, to Target) (bool, error) {
	if to.key == "" || to.workerID != "" {
		return false, nil
	}
	to.front = false
	subj, err := to.subject(c.subj)
	if err != nil {
		return false, err
	}
	cons, err := c.js.Consumer(ctx, c.cfg.TasksStream, keyConsumer(subj))
	switch {
	case errors.Is(err, jetstream.ErrConsumerNotFound):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("queue: the consumer of %s: %w", subj, err)
	}
	return cons.CachedInfo().Config.Metadata[maxRunningMeta] != "", nil
}

// frontToken ends the subject of a key's front lane.
const frontToken = "front"

// Front targets the front lane of t's concurrency key; t itself when t is
// not a key of a shared queue.
func (t Target) Front() Target {
	if t.key != "" && t.workerID == "" {
		t.front = true
	}
	return t
}

// frontKey is the loop's name of key's front lane: the key, a dot and
// frontToken (a key holds no dot).
func frontKey(key string) string { return key + "." + frontToken }

// laneOf splits a loop's key name into the concurrency key and whether it
// names the key's front lane.
func laneOf(key string) (base string, front bool) {
	base, front = strings.CutSuffix(key, "."+frontToken)
	return base, front
}

// tasksAt is the subject of key at level prio of queue ("": unkeyed; a
// frontKey: the key's front lane).
func (s Subjects) tasksAt(queue string, prio int, key string) string {
	if key == "" {
		return s.TasksLevel(queue, prio)
	}
	return s.TasksKey(queue, prio, key)
}

// keyConsumer names the durable consumer of a subject made on demand (a
// key's, or a level's that is not fixed): "key-" and a hash of the subject,
// since queue names and keys may both hold '-'.
func keyConsumer(subject string) string {
	sum := sha256.Sum256([]byte(subject))
	return "key-" + hex.EncodeToString(sum[:10])
}

// keyDiscoveryEvery bounds how often a loop reads a queue's keyed subjects.
const keyDiscoveryEvery = 100 * time.Millisecond

// keyConsumerInactive is how long a key's consumer lives without pulls; a
// later message on its subject makes it again.
const keyConsumerInactive = time.Hour

// keySource is one candidate of a level in a loop: a key's consumer, or the
// level's unkeyed one (key "").
type keySource struct {
	*source
	key    string
	weight float64
	pass   float64
	empty  bool // gave fewer messages than asked since the loop's last discovery
	sticky bool // asked every round even when empty (high work must not wait for discovery)
	// capped: the key has a maximum; room is what it may still start, as
	// read at the last discovery less what the loop took since.
	capped bool
	room   int
}

// cappedWait is the pull wait of a capped key: a request for more than the
// consumer may deliver (another worker took the room first) stalls on the
// server, so it is not a no-wait request but one that ends after this.
const cappedWait = 20 * time.Millisecond

// readRoom reads how many more tasks a capped key may start.
func (ks *keySource) readRoom(ctx context.Context) error {
	info, err := (*ks.cons.Load()).Info(ctx)
	if err != nil {
		return fmt.Errorf("queue: consumer %s info: %w", ks.cfg.Durable, err)
	}
	ks.room = max(info.Config.MaxAckPending-info.NumAckPending, 0)
	return nil
}

// limitOf is the operator's setting of key.
func (p *Puller) limitOf(key string) KeyLimit {
	if l, ok := p.keys[key]; ok {
		return l
	}
	return p.defaultKey
}

// discover reads the subjects of queue q under <prefix>.tasks.<q>. that
// hold messages and returns them per level, by key ("": the level's
// unkeyed subject). Subjects of no level are not tasks of this layout and
// are left alone.
func (p *Puller) discover(ctx context.Context, q string) (map[int]map[string]bool, error) {
	st, err := p.c.js.Stream(ctx, p.c.cfg.TasksStream)
	if err != nil {
		return nil, fmt.Errorf("queue: stream %s: %w", p.c.cfg.TasksStream, err)
	}
	filter := p.c.subj.Tasks(q) + ".>"
	info, err := st.Info(ctx, jetstream.WithSubjectFilter(filter))
	if err != nil {
		return nil, fmt.Errorf("queue: subjects of %s: %w", filter, err)
	}
	out := map[int]map[string]bool{}
	prefix := p.c.subj.Tasks(q) + "."
	for subj, n := range info.State.Subjects {
		level, key, _ := strings.Cut(strings.TrimPrefix(subj, prefix), ".")
		prio, ok := parseLevel(level)
		if base, _ := laneOf(key); n == 0 || !ok || strings.Contains(base, ".") {
			continue
		}
		if out[prio] == nil {
			out[prio] = map[string]bool{}
		}
		out[prio][key] = true
	}
	return out, nil
}

// newKeySource makes (or updates) the consumer of key ("": none) at level
// prio of queue q, with the operator's maximum for the key, and returns its
// source.
func (p *Puller) newKeySource(ctx context.Context, q string, prio int, key string) (*source, KeyLimit, error) {
	subj := p.c.subj.tasksAt(q, prio, key)
	lim := KeyLimit{}
	base, front := laneOf(key)
	if base != "" {
		lim = p.limitOf(base)
	}
	cfg := p.c.consumerConfig(keyConsumer(subj), subj)
	cfg.InactiveThreshold = keyConsumerInactive
	if lim.MaxRunning > 0 {
		cfg.MaxAckPending = lim.MaxRunning
		cfg.Metadata = map[string]string{maxRunningMeta: strconv.Itoa(lim.MaxRunning)}
	}
	s := &source{name: q, prio: prio, front: front, cfg: cfg}
	if _, err := p.ensure(ctx, s); err != nil {
		return nil, lim, err
	}
	return s, lim, nil
}

// keyedSource returns the loop's source of key ("": none) at level prio of
// queue q, making its consumer the first time; the unkeyed subjects of the
// fixed levels are the loop's own sources.
func (p *Puller) keyedSource(ctx context.Context, g *levelLoop, q string, prio int, key string) (*keySource, error) {
	subj := p.c.subj.tasksAt(q, prio, key)
	if ks := g.keyed[subj]; ks != nil {
		return ks, nil
	}
	s, lim, err := p.newKeySource(ctx, q, prio, key)
	if err != nil {
		return nil, err
	}
	ks := &keySource{source: s, key: key, weight: float64(max(lim.Weight, 1)), pass: g.minPass(prio), capped: lim.MaxRunning > 0}
	g.keyed[subj] = ks
	return ks, nil
}
