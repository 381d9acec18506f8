package queue

import (
	"context"
	"errors"
	"math"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// maxFetchBatch bounds the messages asked for in one pull request, so that one source does not
// hold every free slot while its request is in flight.
const maxFetchBatch = 128

// errorPause is how long a source's loop waits after a failed pull before it pulls again.
const errorPause = time.Second

// Serve pulls work for slots until ctx ends, then returns ctx's error once every pull has
// stopped. The worker's own subject and every shared queue each have their own loop, so a
// message on any of them is taken as soon as a slot is free. A loop reserves the free slots
// (at least one, at most maxFetchBatch) and asks for that many messages without waiting: a
// queue's priority levels highest first, each for what the levels above left (see
// levelShareEvery for the share a lower level is owed); it gives back the slots no message
// took. When the loop's subjects are drained it waits for the next message with a pull request
// of one message (one slot) lasting Config.PullWait, or Config.PollInterval when the Puller has
// several sources (a waiting request holds a slot another source may need, and a queue's
// request waits on one subject: the one that delivered last, the default tenant's at first).
//
// PullerConfig.Gate, when set, is asked before each pull; a closed gate holds the loop (a pull
// already in flight still hands over what it gets).
//
// handle receives each Delivery, holding its slot (freed when it is settled), on the pulling
// goroutine: it must return quickly, typically by starting a goroutine. A Delivery taken just
// as ctx ends is still handed to handle. onError (nil: ignored) receives pull failures (a lost
// connection, missing permissions); the loop then pauses a second and pulls again.
func (p *Puller) Serve(ctx context.Context, slots *Slots, handle func(*Delivery), onError func(error)) error {
	var wg sync.WaitGroup
	for _, g := range p.groups {
		loop := newLevelLoop(p.queueOf(g), g)
		if loop.queue != "" {
			if sub := p.c.watchHints(loop.queue, &loop.hinted); sub != nil {
				defer func() { _ = sub.Unsubscribe() }()
			}
		}
		wg.Go(func() { p.serveGroup(ctx, loop, slots, handle, onError) })
	}
	wg.Wait()
	return ctx.Err()
}

// serveGroup is the pull loop of one group: the worker's subject, or a queue's levels.
func (p *Puller) serveGroup(ctx context.Context, g *levelLoop, slots *Slots, handle func(*Delivery), onError func(error)) {
	drained := false
	for ctx.Err() == nil {
		if p.gate != nil && p.gate(ctx) != nil {
			return
		}
		if g.queue != "" && p.qgate != nil && p.qgate(ctx, g.queue) != nil {
			return
		}
		r, err := slots.reserve(ctx, maxFetchBatch)
		if err != nil {
			return
		}
		var wait time.Duration
		if drained {
			r.keep(1)
			wait = p.idleWait()
		}
		asked := r.n
		got, err := p.fetchGroup(ctx, g, r, wait, handle)
		r.putBack()
		switch {
		case err == nil:
			drained = got < asked
		case ctx.Err() != nil:
			return
		default:
			if onError != nil {
				onError(err)
			}
			drained = true
			pause(ctx, errorPause)
		}
	}
}

// fetchGroup fills the reservation r from g's sources without waiting, in g's order (levels
// owed a share first, then highest first; within a level, concurrency keys by weighted fair
// share: fairness.go), and hands each Delivery to handle. When nothing came and wait > 0 it
// then waits up to wait on one source for one message.
func (p *Puller) fetchGroup(ctx context.Context, g *levelLoop, r *reservation, wait time.Duration, handle func(*Delivery)) (int, error) {
	each := func(d *Delivery) {
		d.release = r.take()
		handle(d)
	}
	if err := p.refresh(ctx, g); err != nil {
		return 0, err
	}
	clear(g.full)
	total := 0
	for _, st := range g.plan() {
		if r.n == 0 {
			g.skipped(st.i, total)
			continue
		}
		n := r.n
		if st.share {
			n = 1
		}
		got, err := p.fetchLevel(ctx, g, st.i, n, r, each)
		g.asked(st.i)
		total += got
		if err != nil {
			return total, err
		}
	}
	if total > 0 {
		g.busy()
	}
	if total > 0 || wait == 0 {
		return total, nil
	}
	if g.queue != "" {
		wait = min(wait, g.idleWait())
	}
	got, err := p.fetch(ctx, g.last.source, 1, wait, each)
	if got > 0 {
		g.last.empty = false // it has work again: the next round asks it for every free slot
		g.busy()
	}
	return got, err
}

// A queue's idle loop waits on one of its subjects (the key or level that
// delivered last): work arriving on another, a new tenant's first task say,
// is seen when that wait ends (a pull request cannot be withdrawn). The
// first idle wait after the loop got work, or after a level hint, lasts
// idleWaitFirst, and each idle wait without a message twice the last, up
// to keyedIdleWait: a loop that has just drained (another key's work is
// likely on its way) looks again soon, and a loop idle for long asks the
// server four times a second.
const (
	idleWaitFirst = 20 * time.Millisecond
	keyedIdleWait = 250 * time.Millisecond
)

// fetchLevel asks level i's candidates for up to n messages: first the front lanes, each for
// all that is left (released tasks go before the rest of their level: fairness.go); then, with
// one candidate left, all of the rest; with several, each its weighted share, lowest pass first,
// then what is left to those that gave all they were asked, in the same order. Each candidate's
// pass advances by what it gave over its weight.
func (p *Puller) fetchLevel(ctx context.Context, g *levelLoop, i, n int, r *reservation, each func(*Delivery)) (int, error) {
	fronts, cands := g.candidates(i)
	total := 0
	for _, c := range fronts {
		got, _, err := p.take(ctx, g, c, min(n-total, r.n), each)
		total += got
		if err != nil {
			return total, err
		}
	}
	n -= total
	weights := 0.0
	for _, c := range cands {
		weights += c.weight
	}
	taken := 0
	full := make([]bool, len(cands)) // gave all it was asked: may have more
	for round := range 2 {
		for j, c := range cands {
			k := min(n-taken, r.n)
			if round == 0 {
				k = min(k, int(math.Ceil(float64(n)*c.weight/weights)))
			} else if !full[j] || len(cands) == 1 {
				continue
			}
			got, gaveAll, err := p.take(ctx, g, c, k, each)
			taken += got
			full[j] = gaveAll
			if err != nil {
				return total + taken, err
			}
		}
	}
	return total + taken, nil
}

// take asks c for up to k messages (fewer when c is a key at its maximum: gate.go) and records
// what it gave: its pass, whether it is empty. gaveAll reports that it gave every message asked
// for (it may have more).
//
// A key at its maximum is asked no more in the round, and its sources are skipped until the
// next discovery: a token handed back meanwhile must not start a later task of the key before
// the one that found none (gate.go).
func (p *Puller) take(ctx context.Context, g *levelLoop, c *keySource, k int, each func(*Delivery)) (got int, gaveAll bool, err error) {
	if c.gate != nil && g.full[c.gate] {
		c.empty = true
		return 0, false, nil
	}
	if k <= 0 {
		return 0, false, nil
	}
	got, full, err := p.fetchFrom(ctx, c.source, k, 0, each)
	if full {
		g.full[c.gate] = true
	}
	if got > 0 {
		c.pass += float64(got) / c.weight
		g.last = c
	}
	c.empty = got < k
	return got, got == k, err
}

// idleWait is how long a pull request of a drained source waits for a message.
func (p *Puller) idleWait() time.Duration {
	if len(p.sources) == 1 {
		return p.c.cfg.PullWait
	}
	return p.c.cfg.PollInterval
}

// pause waits d or until ctx ends.
func pause(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// fetchBatch asks one consumer for up to n messages, waiting up to wait (0: not at all), and
// calls each with every message as it arrives.
//
// The pull request's expiry is the server's to keep: the batch ends when the server says the
// request expired (its status comes after every message it delivered), not when a client-side
// deadline fires. A pull ended by a client deadline dropped the messages the server sent in its
// last moments (nats.go asks the server for 90 % of the deadline and stops reading at the
// deadline, so a loaded client lost some), and each came back only after AckWait.
// A ctx deadline shortens the wait the same way; a cancelled ctx stops reading at once, and
// what the server still delivers then is redelivered after AckWait.
func fetchBatch(ctx context.Context, cons jetstream.Consumer, n int, wait time.Duration, each func(jetstream.Msg)) (int, error) {
	var batch jetstream.MessageBatch
	var err error
	if wait == 0 {
		batch, err = cons.FetchNoWait(n)
	} else {
		if dl, ok := ctx.Deadline(); ok {
			wait = min(wait, time.Until(dl))
		}
		if wait < minPullWait {
			// Too little time for a pull request (the client refuses one that has expired).
			pause(ctx, wait)
			return 0, nil
		}
		batch, err = cons.Fetch(n, jetstream.FetchMaxWait(wait))
	}
	if err != nil {
		return 0, err
	}
	got := 0
	msgs, done := batch.Messages(), ctx.Done()
	for {
		select {
		case msg, ok := <-msgs:
			if !ok {
				return got, batch.Error()
			}
			got++
			each(msg)
		case <-done:
			if errors.Is(ctx.Err(), context.Canceled) {
				return got, ctx.Err()
			}
			done = nil // the deadline: the request expires with it; read what it brought
		}
	}
}
