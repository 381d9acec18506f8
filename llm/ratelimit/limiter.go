package ratelimit

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentfleet/agentfleet/internal/jscas"
	"github.com/agentfleet/agentfleet/llm"
)

// pollInterval bounds how long a waiting request goes without reading
// the shared state again.
const pollInterval = 250 * time.Millisecond

// MinPause is how long a 429 without retry-after pauses its key.
const MinPause = time.Second

// Limiter applies Rules through a key-value bucket shared by the fleet.
// It is safe for concurrent use.
type Limiter struct {
	kv    jetstream.KeyValue
	rules Rules
	owner string // prefix of this limiter's lease ids
	seq   atomic.Uint64
	now   func() time.Time

	mu    sync.Mutex
	turns map[Key]chan struct{} // one waiter per key and process reads the shared state
}

// New returns a limiter over kv (see queue.Client.KeyValue) for rules;
// owner names this process in lease ids (a worker id).
func New(kv jetstream.KeyValue, rules Rules, owner string) (*Limiter, error) {
	for i, r := range rules {
		if err := r.Validate(fmt.Sprintf("rate_limits[%d]", i)); err != nil {
			return nil, err
		}
	}
	return &Limiter{kv: kv, rules: rules, owner: owner, now: time.Now, turns: map[Key]chan struct{}{}}, nil
}

// Limited reports whether a rule covers k (the key, or k's tenant's
// share of it).
func (l *Limiter) Limited(k Key) bool {
	return len(l.scopes(k)) > 0
}

// Permit is one admitted request; Release it when the request is done.
type Permit struct {
	l      *Limiter
	key    Key
	lease  string
	Waited time.Duration // how long Acquire waited for a limit (0: it did not)
	Reason string        // the limit that made it wait ("" when none did)
	next   *Permit       // the key's permit after a tenant's share's
}

// storeKey is the entry of k: a hash, since model names may hold
// characters a key-value key may not.
func storeKey(k Key) string {
	h := sha256.Sum256([]byte(k.String()))
	return "k" + hex.EncodeToString(h[:12])
}

// Acquire waits until k admits a request and takes it: k's tenant's
// share first (when a rule gives one), then the key's own. A key no rule
// covers is admitted at once (a nil *Permit, which Release ignores).
func (l *Limiter) Acquire(ctx context.Context, k Key) (*Permit, error) {
	var first, last *Permit
	for _, sk := range l.scopes(k) {
		limits, _ := l.rules.For(sk)
		p, err := l.acquireOne(ctx, sk, limits)
		if err != nil {
			first.Release(ctx)
			return nil, err
		}
		if first == nil {
			first = p
		} else {
			last.next = p
			if p.Reason != "" {
				first.Waited, first.Reason = first.Waited+p.Waited, p.Reason
			}
		}
		last = p
	}
	return first, nil
}

// acquireOne waits until the one key k admits a request under limits.
func (l *Limiter) acquireOne(ctx context.Context, k Key, limits Limits) (*Permit, error) {
	p := &Permit{l: l, key: k, lease: l.owner + "-" + strconv.FormatUint(l.seq.Add(1), 36)}
	start := l.now()
	turn := l.turn(k)
	select { // the requests of this process queue here, not on the bucket
	case turn <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-turn }()
	for {
		admitted, wait, why, err := l.try(ctx, k, limits, p.lease)
		if err != nil {
			return nil, err
		}
		if admitted {
			if p.Reason != "" { // a limit held it, not only a lost race
				p.Waited = l.now().Sub(start)
			}
			return p, nil
		}
		if why != "" {
			p.Reason = why
		}
		if wait > pollInterval {
			wait = pollInterval
		}
		if err := sleep(ctx, wait); err != nil {
			return nil, err
		}
	}
}

// turn is the local queue of k's waiters: one at a time polls the shared
// state, so a process with hundreds of waiting sessions reads it as often
// as one with one.
func (l *Limiter) turn(k Key) chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	t, ok := l.turns[k]
	if !ok {
		t = make(chan struct{}, 1)
		l.turns[k] = t
	}
	return t
}

// try makes one attempt: admitted, or how long to wait and why.
func (l *Limiter) try(ctx context.Context, k Key, limits Limits, lease string) (bool, time.Duration, string, error) {
	s, rev, err := l.load(ctx, k, limits)
	if err != nil {
		return false, 0, "", err
	}
	now := l.now()
	s.refill(now)
	if d, why := s.wait(now); d > 0 {
		return false, d, why, nil
	}
	s.take(lease, now)
	ok, err := l.save(ctx, k, s, rev)
	if err != nil || !ok {
		return false, jitter(), "", err // lost a race: read again soon
	}
	return true, 0, "", nil
}

// Release ends the permit's lease (and the key's, after a tenant's
// share's). A nil permit is a no-op.
func (p *Permit) Release(ctx context.Context) {
	if p == nil {
		return
	}
	p.next.Release(ctx)
	if p.lease == "" {
		return
	}
	lease := p.lease
	p.lease = ""
	limits, _ := p.l.rules.For(p.key)
	if limits.ConcurrentRequests == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	_ = p.l.update(ctx, p.key, limits, func(s *state) bool {
		_, had := s.Leases[lease]
		delete(s.Leases, lease)
		return had
	})
}

// Charge takes a finished call's tokens from k's token buckets (its
// tenant's share's and the key's).
func (l *Limiter) Charge(ctx context.Context, k Key, u llm.Usage) error {
	var errs []error
	for _, sk := range l.scopes(k) {
		errs = append(errs, l.chargeOne(ctx, sk, u))
	}
	return errors.Join(errs...)
}

func (l *Limiter) chargeOne(ctx context.Context, k Key, u llm.Usage) error {
	limits, ok := l.rules.For(k)
	if !ok || (limits.InputTokensPerMinute == 0 && limits.OutputTokensPerMinute == 0) {
		return nil
	}
	return l.update(ctx, k, limits, func(s *state) bool {
		s.refill(l.now())
		s.In -= float64(u.InputTokens)
		s.Out -= float64(u.OutputTokens)
		return u.InputTokens > 0 || u.OutputTokens > 0
	})
}

// update applies f to k's state by compare-and-set, again on a conflict;
// f returns false when it changed nothing.
func (l *Limiter) update(ctx context.Context, k Key, limits Limits, f func(*state) bool) error {
	for attempt := 0; ; attempt++ {
		s, rev, err := l.load(ctx, k, limits)
		if err != nil {
			return err
		}
		if !f(&s) {
			return nil
		}
		ok, err := l.save(ctx, k, s, rev)
		if err != nil || ok {
			return err
		}
		if attempt > 100 {
			return errors.New("ratelimit: too many concurrent writers")
		}
		if err := sleep(ctx, jitter()); err != nil {
			return err
		}
	}
}

// load reads k's state; rev 0 means it has no entry yet (a fresh state
// with full buckets). Configured limits lower the stored ones only if
// lower; raising a limit takes effect from the configuration of whoever
// writes next.
func (l *Limiter) load(ctx context.Context, k Key, limits Limits) (state, uint64, error) {
	e, err := l.kv.Get(ctx, storeKey(k))
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return newState(limits, l.now()), 0, nil
	}
	if err != nil {
		return state{}, 0, fmt.Errorf("ratelimit: reading %s: %w", k, err)
	}
	var s state
	if err := json.Unmarshal(e.Value(), &s); err != nil {
		return newState(limits, l.now()), e.Revision(), nil //nolint:nilerr // unreadable: start afresh
	}
	s.Limits = s.Limits.reconcile(limits)
	return s, e.Revision(), nil
}

// save writes s if k's entry is still at rev; false when it was not.
func (l *Limiter) save(ctx context.Context, k Key, s state, rev uint64) (bool, error) {
	b, _ := json.Marshal(s)
	var err error
	if rev == 0 {
		_, err = l.kv.Create(ctx, storeKey(k), b)
	} else {
		_, err = l.kv.Update(ctx, storeKey(k), b, rev)
	}
	if err == nil {
		return true, nil
	}
	if jscas.Conflict(err) {
		return false, nil
	}
	return false, fmt.Errorf("ratelimit: writing %s: %w", k, err)
}

// reconcile keeps a provider-lowered limit but never exceeds the
// configuration: each set dimension is min(stored, configured); a stored
// dimension the configuration no longer sets is dropped.
func (stored Limits) reconcile(cfg Limits) Limits {
	out := cfg
	pick := func(s, c float64) float64 {
		if c > 0 && s > 0 && s < c {
			return s
		}
		return c
	}
	out.RequestsPerMinute = pick(stored.RequestsPerMinute, cfg.RequestsPerMinute)
	out.InputTokensPerMinute = pick(stored.InputTokensPerMinute, cfg.InputTokensPerMinute)
	out.OutputTokensPerMinute = pick(stored.OutputTokensPerMinute, cfg.OutputTokensPerMinute)
	if cfg.ConcurrentRequests > 0 && stored.ConcurrentRequests > 0 && stored.ConcurrentRequests < cfg.ConcurrentRequests {
		out.ConcurrentRequests = stored.ConcurrentRequests
	}
	return out
}

func jitter() time.Duration { return time.Duration(1+rand.IntN(10)) * time.Millisecond }

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
