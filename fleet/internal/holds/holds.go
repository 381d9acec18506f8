// Package holds keeps the fleet's pauses: standing rules that hold tasks
// queued (a paused queue, or a paused filter such as a label), and the
// tasks a worker held because a rule matched them. Both live in one
// JetStream key-value bucket, <prefix>_holds, so a pause survives worker
// kills and dispatcher restarts, and every process that opens a Set keeps
// a mirror of the bucket through a watch.
//
// How a pause holds work without spending deliveries:
//
//   - A paused queue is not pulled: each worker's pull loop of the queue
//     waits on the Set (WaitQueue) before every pull, as the store-outage
//     gate does. Its messages stay in JetStream, in order, undelivered, and
//     resume where they were.
//   - A paused filter (labels, tenant, root, created range, queue within a
//     tenant) cannot be seen on a subject, so its tasks' start messages are
//     delivered. A worker that receives the start message of a root task
//     that is queued and matched by a rule does not claim it: it records
//     the task as held (Hold, with the message's stream sequence) and acks
//     the message. The task's state stays queued and its attempts do not
//     change; the message is gone, so nothing redelivers it. When no rule
//     holds it any more, a dispatcher publishes a new start message through
//     the router (taskops.HoldReleaseMessage) and drops the record; held
//     tasks are released in the order of their original messages.
//
// A message that a worker's pull had in flight when its queue was paused
// is held as a filter's would be, so a paused queue claims nothing new.
// A pause holds tasks that have not started: running tasks keep running,
// and the children and wake-ups of a tree that has started are not held
// (a parent would wait for ever on a held child). moves.go keeps the
// moves of queued tasks between priority levels in the same bucket.
//
// A pause takes effect on a worker when its watch delivers the change,
// normally within milliseconds of Pause returning; a task claimed before
// then runs.
package holds

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentfleet/agentfleet/fleet/api"
	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/store"
)

// Bucket is the name of the key-value bucket (queue.Buckets lists it).
const Bucket = "holds"

// Key prefixes in the bucket.
const (
	queuePrefix = "queue."
	rulePrefix  = "rule."
	heldPrefix  = "held."
)

// Rule is one standing pause: a whole queue (Queue set, every tenant), or
// the tasks a filter selects within some tenants.
type Rule struct {
	Queue   string         `json:"queue,omitempty"`
	Filter  api.BulkFilter `json:"filter,omitzero"`
	Tenants []string       `json:"tenants,omitempty"` // a filter's scope; nil: every tenant
	By      string         `json:"by"`
	At      time.Time      `json:"at"`
	Reason  string         `json:"reason,omitempty"`
}

// QueueRule is the pause of a whole queue.
func QueueRule(q, by, reason string) Rule {
	return Rule{Queue: q, By: by, Reason: reason, At: time.Now().UTC()}
}

// Key is the rule's key in the bucket: "queue.<q>" for a queue, else
// "rule." and a hash of the filter and scope, so pausing the same filter
// twice makes one rule and resuming it names it again.
func (r Rule) Key() string {
	if r.Queue != "" {
		return queuePrefix + r.Queue
	}
	return rulePrefix + FilterKey(r.Filter, r.Tenants)
}

// FilterKey hashes a filter and its scope (tenants in any order).
func FilterKey(f api.BulkFilter, tenants []string) string {
	ts := slices.Sorted(slices.Values(tenants))
	b, _ := json.Marshal(struct {
		F api.BulkFilter `json:"f"`
		T []string       `json:"t"`
	}{f, ts}) // map keys are sorted by encoding/json
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:12])
}

// CheckFilter names what a pause filter may not hold: states other than
// queued (a pause holds queued tasks only) and an error (queued tasks have
// none).
func CheckFilter(f api.BulkFilter) (field, reason string) {
	for _, s := range f.States {
		if s != store.TaskQueued {
			return "states", fmt.Sprintf("a pause holds queued tasks only: leave states out or name only %q", store.TaskQueued)
		}
	}
	if f.Error != "" {
		return "error", "a pause holds queued tasks, which have no error: leave error out"
	}
	return "", ""
}

// Holds reports whether the rule holds t: a root task that is queued,
// in the rule's queue or selected by its filter within its scope.
func (r Rule) Holds(t store.Task) bool {
	if t.State != store.TaskQueued || t.ParentID != uuid.Nil {
		return false
	}
	if r.Queue != "" {
		return t.Queue == r.Queue
	}
	return (r.Tenants == nil || slices.Contains(r.Tenants, t.Tenant)) && Selects(r.Filter, t)
}

// Selects reports whether f selects t (its states and error aside).
func Selects(f api.BulkFilter, t store.Task) bool {
	switch {
	case f.Tenant != "" && t.Tenant != f.Tenant,
		f.Queue != "" && t.Queue != f.Queue,
		f.RootID != uuid.Nil && t.RootID != f.RootID,
		!f.CreatedAfter.IsZero() && t.CreatedAt.Before(f.CreatedAfter),
		!f.CreatedBefore.IsZero() && !t.CreatedAt.Before(f.CreatedBefore):
		return false
	}
	for k, v := range f.Labels {
		if got, ok := t.Labels[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// Held is a task a worker held: its start message was acked and a
// dispatcher publishes a new one once no rule holds it.
type Held struct {
	TaskID uuid.UUID `json:"task_id"`
	Tenant string    `json:"tenant"`
	Queue  string    `json:"queue"`
	Seq    uint64    `json:"seq"` // the held message's sequence in TASKS: the release order
	Worker string    `json:"worker"`
	At     time.Time `json:"at"`
	// Revision is the record's revision in the bucket: the release's
	// message id carries it, so a task held twice is released twice.
	Revision uint64 `json:"-"`
}

// Set is a live mirror of the bucket. Its methods are safe for
// concurrent use.
type Set struct {
	kv     jetstream.KeyValue
	w      jetstream.KeyWatcher
	cancel context.CancelFunc
	done   chan struct{}

	mu      sync.Mutex
	rules   map[string]Rule
	held    map[string]Held
	moves   map[string]Move // moves.go
	version uint64          // counts the changes of rules
	applied uint64          // the highest revision the mirror has applied
	changed chan struct{}   // closed and replaced at every change
}

// Open opens (or creates) the bucket and returns a Set whose mirror is
// current; it watches until Close.
func Open(ctx context.Context, q *queue.Client) (*Set, error) {
	kv, err := q.KeyValue(ctx, Bucket, "agentfleet pauses and held tasks (fleet/internal/holds)")
	if err != nil {
		return nil, err
	}
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	w, err := kv.WatchAll(wctx)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("holds: watching bucket %s: %w", Bucket, err)
	}
	s := &Set{kv: kv, w: w, cancel: cancel, done: make(chan struct{}),
		rules: map[string]Rule{}, held: map[string]Held{}, moves: map[string]Move{}, changed: make(chan struct{})}
	ready := make(chan struct{})
	go s.watch(ready)
	select {
	case <-ready:
		return s, nil
	case <-ctx.Done():
		s.Close()
		return nil, ctx.Err()
	}
}

// Close stops the watch.
func (s *Set) Close() {
	s.cancel()
	_ = s.w.Stop()
	<-s.done
}

func (s *Set) watch(ready chan struct{}) {
	defer close(s.done)
	first := true
	for e := range s.w.Updates() {
		if e == nil { // the initial values are all in
			if first {
				close(ready)
				first = false
			}
			continue
		}
		s.apply(e)
	}
}

func (s *Set) apply(e jetstream.KeyValueEntry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key, del := e.Key(), e.Operation() != jetstream.KeyValuePut
	s.applied = max(s.applied, e.Revision())
	switch {
	case strings.HasPrefix(key, movedPrefix):
		var m Move
		if del || json.Unmarshal(e.Value(), &m) != nil {
			delete(s.moves, key)
		} else {
			m.Revision = e.Revision()
			s.moves[key] = m
		}
	case strings.HasPrefix(key, heldPrefix):
		var h Held
		if del || json.Unmarshal(e.Value(), &h) != nil {
			delete(s.held, key)
		} else {
			h.Revision = e.Revision()
			s.held[key] = h
		}
	case strings.HasPrefix(key, queuePrefix), strings.HasPrefix(key, rulePrefix):
		s.version++
		var r Rule
		if del || json.Unmarshal(e.Value(), &r) != nil {
			delete(s.rules, key)
		} else {
			s.rules[key] = r
		}
	}
	close(s.changed)
	s.changed = make(chan struct{})
}

// Changed returns a channel closed at the mirror's next change.
func (s *Set) Changed() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.changed
}

// QueuePaused reports whether queue q is paused.
func (s *Set) QueuePaused(q string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.rules[queuePrefix+q]
	return ok
}

// WaitQueue returns nil once queue q is not paused, or ctx's error.
func (s *Set) WaitQueue(ctx context.Context, q string) error {
	for {
		ch := s.Changed()
		if !s.QueuePaused(q) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ch:
		}
	}
}

// Any reports whether some rule is in force.
func (s *Set) Any() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.rules) > 0
}

// MayHold reports whether a task of queue q may be held: q is paused or
// some filter rule is in force (a worker then reads the task).
func (s *Set) MayHold(q string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.rules[queuePrefix+q]; ok {
		return true
	}
	for key := range s.rules {
		if strings.HasPrefix(key, rulePrefix) {
			return true
		}
	}
	return false
}

// RulesVersion changes whenever a rule is put in force or ended.
func (s *Set) RulesVersion() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.version
}

// Holding returns the first rule that holds t.
func (s *Set) Holding(t store.Task) (Rule, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.rules {
		if r.Holds(t) {
			return r, true
		}
	}
	return Rule{}, false
}

// Rules returns the rules in force, by key.
func (s *Set) Rules() map[string]Rule {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.rules)
}

// Held returns the held tasks in release order (their messages' order).
func (s *Set) Held() []Held {
	s.mu.Lock()
	out := slices.Collect(maps.Values(s.held))
	s.mu.Unlock()
	slices.SortFunc(out, func(a, b Held) int {
		if a.Seq != b.Seq {
			return cmp.Compare(a.Seq, b.Seq)
		}
		return strings.Compare(a.TaskID.String(), b.TaskID.String())
	})
	return out
}

// Pause puts r in force (again: the same rule replaces itself).
func (s *Set) Pause(ctx context.Context, r Rule) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	rev, err := s.kv.Put(ctx, r.Key(), b)
	if err != nil {
		return fmt.Errorf("holds: writing pause %s: %w", r.Key(), err)
	}
	return s.waitUntil(ctx, func() bool { return s.applied >= rev })
}

// waitUntil returns nil once done (called with s.mu held) holds of the
// mirror, or ctx's error: so that whoever changed a rule reads its own
// change from this Set at once.
func (s *Set) waitUntil(ctx context.Context, done func() bool) error {
	for {
		s.mu.Lock()
		ok, changed := done(), s.changed
		s.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("holds: waiting for the pauses' mirror: %w", ctx.Err())
		}
	}
}

// Unpause ends the rule of key; it reports false when there was none.
func (s *Set) Unpause(ctx context.Context, key string) (bool, error) {
	if _, err := s.kv.Get(ctx, key); errors.Is(err, jetstream.ErrKeyNotFound) {
		return false, nil
	} else if err != nil {
		return false, fmt.Errorf("holds: reading pause %s: %w", key, err)
	}
	if err := s.kv.Delete(ctx, key); err != nil {
		return false, fmt.Errorf("holds: removing pause %s: %w", key, err)
	}
	// Bounded: a pause of the same key put back meanwhile would keep the
	// rule in the mirror; the delete is written all the same.
	wctx, cancel := context.WithTimeout(ctx, settleWait)
	defer cancel()
	if err := s.waitUntil(wctx, func() bool { _, in := s.rules[key]; return !in }); err != nil && ctx.Err() != nil {
		return true, err
	}
	return true, nil
}

// settleWait bounds how long Unpause waits to see its delete in the
// mirror.
const settleWait = 5 * time.Second

// Hold records t as held by worker, its start message being the stream's
// message seq. The caller acks the message only after Hold returned nil.
func (s *Set) Hold(ctx context.Context, t store.Task, seq uint64, worker string) error {
	b, _ := json.Marshal(Held{TaskID: t.ID, Tenant: t.Tenant, Queue: t.Queue, Seq: seq, Worker: worker, At: time.Now().UTC()})
	if _, err := s.kv.Put(ctx, heldPrefix+t.ID.String(), b); err != nil {
		return fmt.Errorf("holds: recording held task %s: %w", t.ID, err)
	}
	return nil
}

// Released drops h's record, unless it was written again since (a later
// hold of the same task, which stays).
func (s *Set) Released(ctx context.Context, h Held) error {
	return s.drop(ctx, heldPrefix+h.TaskID.String(), h.Revision)
}

// drop deletes key if its revision is still rev.
func (s *Set) drop(ctx context.Context, key string, rev uint64) error {
	err := s.kv.Delete(ctx, key, jetstream.LastRevision(rev))
	if err != nil && !errors.Is(err, jetstream.ErrKeyExists) {
		return fmt.Errorf("holds: dropping %s: %w", key, err)
	}
	return nil
}
