package queue

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Concurrency keys. A message published with a key (ToQueueFor) goes to
// <prefix>.tasks.<queue>.<level>.<key> (level: priority.go), and every
// such subject has its own durable consumer, made by the first worker that
// sees a message on it (keyConsumer) and shared by all workers:
//
//   - a key's maximum of running tasks is kept by its gate (gate.go): one
//     token per task that may run, taken before any of the key's subjects
//     is pulled and held as long as the task's message (which stays
//     unacknowledged while the task runs: it is acked when the task ends or
//     parks). So the maximum holds across the fleet and across the key's
//     priority levels and front lanes; at the maximum the key's messages
//     stay queued and spend no delivery, and other keys are not affected;
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
// their level while they were held, in the order they were held. A front
// lane of a key with a maximum takes the key's tokens like its other
// subjects.
//
// A worker learns which levels and keys have messages, and how many tokens
// each gate holds, from the stream's per-subject counts (one STREAM.INFO
// with a subject filter, at most every keyDiscoveryEvery per queue).
// Messages without a key (children, and everything published before keys)
// are one more candidate of their level, with weight 1 and no maximum.

// KeyLimit is an operator's setting for one concurrency key.
type KeyLimit struct {
	// MaxRunning is the most tasks of the key that run at once across the
	// fleet (0: no maximum beyond Config.MaxAckPending).
	MaxRunning int
	// Weight is the key's share of free slots relative to other keys (0: 1).
	Weight int
}

// MaxKeyRunning bounds KeyLimit.MaxRunning: a key's gate holds one token
// message per task that may run (gate.go), made one at a time when a worker
// first uses it. A key that may run more needs no maximum.
const MaxKeyRunning = 10_000

// check says what is wrong with l, the setting of what.
func (l KeyLimit) check(what string) error {
	switch {
	case l.MaxRunning < 0 || l.Weight < 0:
		return fmt.Errorf("queue: %s: max running and weight must be >= 0, got %d and %d", what, l.MaxRunning, l.Weight)
	case l.MaxRunning > MaxKeyRunning:
		return fmt.Errorf("queue: %s: max running must be at most %d, got %d; give it no maximum (0) instead", what, MaxKeyRunning, l.MaxRunning)
	}
	return nil
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

// keySource is one candidate of a level in a loop: a key's consumer, or the
// level's unkeyed one (key "").
type keySource struct {
	*source
	key    string
	weight float64
	pass   float64
	empty  bool      // gave fewer messages than asked since the loop's last discovery
	probed time.Time // a key's with a maximum: when it was last a candidate (drained)
	sticky bool      // asked every round even when empty (high work must not wait for discovery)
}

// limitOf is the operator's setting of key.
func (p *Puller) limitOf(key string) KeyLimit {
	if l, ok := p.keys[key]; ok {
		return l
	}
	return p.defaultKey
}

// found is what a discovery read of a queue's subjects: those that hold
// messages per level, by key ("": the level's unkeyed subject), and the
// tokens of each gate, by key.
type found struct {
	levels map[int]map[string]bool
	tokens map[string]int
}

// discover reads the subjects of queue q under <prefix>.tasks.<q>. that
// hold messages, and tops up the gates it finds short (recount). Subjects
// of no level and no gate are not tasks of this layout and are left alone.
func (p *Puller) discover(ctx context.Context, q string) (found, error) {
	st, err := p.c.js.Stream(ctx, p.c.cfg.TasksStream)
	if err != nil {
		return found{}, fmt.Errorf("queue: stream %s: %w", p.c.cfg.TasksStream, err)
	}
	filter := p.c.subj.Tasks(q) + ".>"
	info, err := st.Info(ctx, jetstream.WithSubjectFilter(filter))
	if err != nil {
		return found{}, fmt.Errorf("queue: subjects of %s: %w", filter, err)
	}
	out := found{levels: map[int]map[string]bool{}, tokens: map[string]int{}}
	prefix := p.c.subj.Tasks(q) + "."
	for subj, n := range info.State.Subjects {
		rest := strings.TrimPrefix(subj, prefix)
		if key, ok := gateKey(rest); ok {
			out.tokens[key] = int(n)
			continue
		}
		level, key, _ := strings.Cut(rest, ".")
		prio, ok := parseLevel(level)
		if base, _ := laneOf(key); n == 0 || !ok || strings.Contains(base, ".") {
			continue
		}
		if out.levels[prio] == nil {
			out.levels[prio] = map[string]bool{}
		}
		out.levels[prio][key] = true
	}
	return out, p.recount(ctx, q, out.tokens)
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
	// Removed after Config.KeyInactiveThreshold without pulls or acks (a
	// later message on its subject makes it again).
	cfg.InactiveThreshold = p.c.cfg.KeyInactiveThreshold
	s := &source{name: q, prio: prio, front: front, cfg: cfg}
	if lim.MaxRunning > 0 {
		g, err := p.gateOf(ctx, q, base, lim.MaxRunning)
		if err != nil {
			return nil, lim, err
		}
		s.gate = g
	}
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
	ks := &keySource{source: s, key: key, weight: float64(max(lim.Weight, 1)), pass: g.minPass(prio)}
	g.keyed[subj] = ks
	return ks, nil
}
