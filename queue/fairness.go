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
// <prefix>.tasks.<queue>.<band>.<key> (band: high, normal or low), and every
// such subject has its own durable consumer, made by the first worker that
// sees a message on it (keyConsumer) and shared by all workers:
//
//   - the key's maximum of running tasks is the consumer's MaxAckPending.
//     A task's message stays unacknowledged while it runs (it is acked when
//     the task ends or parks), so the server itself counts the key's running
//     tasks across the fleet and delivers nothing more at the maximum: the
//     key's messages stay queued, spend no delivery, and other keys' consumers
//     are not affected;
//   - free slots go to keys in proportion to their weights: each worker's loop
//     of a queue keeps a pass per key (stride scheduling) and, within a band,
//     gives the slots of a round to the keys with the lowest pass first, each
//     at most its weighted share; a key that gets n messages advances its pass
//     by n/weight. A key new to the loop starts at the lowest pass of the keys
//     it knows, so it is served next, not after the backlog of the others.
//
// A worker learns which keys have messages from the stream's per-subject
// counts (one STREAM.INFO with a subject filter, at most every
// keyDiscoveryEvery per queue). Messages without a key (the subjects of
// priority.go, and everything published before keys) are one more
// candidate of their band, with weight 1 and no maximum.

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

// ToQueueFor targets the band of priority in the shared queue name, under
// the given concurrency key ("": no key, as ToQueueAt).
func ToQueueFor(name string, priority int, key string) Target {
	t := ToQueueAt(name, priority)
	t.key = key
	return t
}

// TasksKey returns the subject of one key in one band of a queue:
// <prefix>.tasks.<queue>.<band>.<key>.
func (s Subjects) TasksKey(queue string, b Band, key string) string {
	return s.Tasks(queue) + "." + b.String() + "." + key
}

// keyConsumer names the durable consumer of a keyed subject: "key-" and a
// hash of the subject, since queue names and keys may both hold '-'.
func keyConsumer(subject string) string {
	sum := sha256.Sum256([]byte(subject))
	return "key-" + hex.EncodeToString(sum[:10])
}

// keyDiscoveryEvery bounds how often a loop reads a queue's keyed subjects.
const keyDiscoveryEvery = 100 * time.Millisecond

// keyConsumerInactive is how long a key's consumer lives without pulls; a
// later message on its subject makes it again.
const keyConsumerInactive = time.Hour

// keySource is one candidate of a band in a loop: a key's consumer, or the
// band's unkeyed one (key "").
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

// discover reads the keyed subjects of queue q that hold messages and
// returns them per band.
func (p *Puller) discover(ctx context.Context, q string) (map[Band]map[string]bool, error) {
	st, err := p.c.js.Stream(ctx, p.c.cfg.TasksStream)
	if err != nil {
		return nil, fmt.Errorf("queue: stream %s: %w", p.c.cfg.TasksStream, err)
	}
	filter := p.c.subj.Tasks(q) + ".*.*"
	info, err := st.Info(ctx, jetstream.WithSubjectFilter(filter))
	if err != nil {
		return nil, fmt.Errorf("queue: subjects of %s: %w", filter, err)
	}
	out := map[Band]map[string]bool{}
	prefix := p.c.subj.Tasks(q) + "."
	for subj, n := range info.State.Subjects {
		band, key, ok := strings.Cut(strings.TrimPrefix(subj, prefix), ".")
		if n == 0 || !ok {
			continue
		}
		for _, b := range bandsHighFirst {
			if b.String() == band {
				if out[b] == nil {
					out[b] = map[string]bool{}
				}
				out[b][key] = true
			}
		}
	}
	return out, nil
}

// newKeySource makes (or updates) the consumer of key in band b of queue
// q, with the operator's maximum for the key, and returns its source.
func (p *Puller) newKeySource(ctx context.Context, q string, b Band, key string) (*source, KeyLimit, error) {
	subj := p.c.subj.TasksKey(q, b, key)
	lim := p.limitOf(key)
	cfg := p.c.consumerConfig(keyConsumer(subj), subj)
	cfg.InactiveThreshold = keyConsumerInactive
	if lim.MaxRunning > 0 {
		cfg.MaxAckPending = lim.MaxRunning
	}
	s := &source{name: q, cfg: cfg}
	if _, err := p.ensure(ctx, s); err != nil {
		return nil, lim, err
	}
	return s, lim, nil
}

// keyedSource returns the loop's source of key in band b of queue q,
// making its consumer the first time.
func (p *Puller) keyedSource(ctx context.Context, g *bandLoop, q string, b Band, key string) (*keySource, error) {
	subj := p.c.subj.TasksKey(q, b, key)
	if ks := g.keyed[subj]; ks != nil {
		return ks, nil
	}
	s, lim, err := p.newKeySource(ctx, q, b, key)
	if err != nil {
		return nil, err
	}
	ks := &keySource{source: s, key: key, weight: float64(max(lim.Weight, 1)), pass: g.minPass(b), capped: lim.MaxRunning > 0}
	g.keyed[subj] = ks
	g.band[subj] = b
	return ks, nil
}
