package queue

import (
	"cmp"
	"context"
	"maps"
	"math"
	"slices"
	"sync/atomic"
	"time"
)

// levelLoop is the state of one Serve loop over a group of sources (a
// queue's priority levels, or the worker's subject alone): the levels that
// have messages in preference order, what each is owed (levelShareEvery),
// which source delivered last (the one an idle loop waits on) and, for a
// queue, the concurrency keys it serves with their passes (fairness.go). It
// belongs to its loop's goroutine.
type levelLoop struct {
	queue  string                // "" for the worker's subject
	levels map[int]*level        // every level the loop has met, by priority
	order  []*level              // highest first: the fixed levels and those with messages at the last discovery
	last   *keySource            // the source that last delivered; the idle wait is on it
	keyed  map[string]*keySource // by subject, every source made on demand
	full   map[*gate]bool        // keys found at their maximum in this round (take)

	discovered  time.Time
	hinted      atomic.Bool   // a level hint came since the last reading (levelhint.go)
	idle        time.Duration // the next idle wait (serve.go); 0: idleWaitFirst
	primed      bool          // the default tenant's key sources are made (refresh)
	highDefault *keySource    // the default tenant's key at priority 1, asked every round
}

// level is one priority level of a loop.
type level struct {
	prio  int
	fixed *keySource   // the unkeyed source NewPuller made (fixedLevels, or the worker's), or nil
	keys  []*keySource // sources made on demand whose subject held messages at the last discovery
	owed  int          // messages taken from levels above since it was last asked
}

// newLevelLoop is the loop of a group: the worker's source alone, or a
// queue's fixed levels in fixedLevels order.
func newLevelLoop(queue string, src []*source) *levelLoop {
	g := &levelLoop{queue: queue, levels: map[int]*level{}, keyed: map[string]*keySource{}, full: map[*gate]bool{}}
	if queue == "" {
		lv := g.levelOf(0)
		lv.fixed = &keySource{source: src[0], weight: 1}
		g.last = lv.fixed
		g.reorder()
		return g
	}
	for i, prio := range fixedLevels {
		g.levelOf(prio).fixed = &keySource{source: src[i], weight: 1}
	}
	g.last = g.levels[0].fixed      // where most work lands
	g.levels[1].fixed.sticky = true // children of priority-0 parents
	g.reorder()
	return g
}

// idleWait returns the loop's next idle wait and doubles the one after,
// up to keyedIdleWait (serve.go).
func (g *levelLoop) idleWait() time.Duration {
	w := cmp.Or(g.idle, idleWaitFirst)
	g.idle = min(2*w, keyedIdleWait)
	return w
}

// busy notes that the loop got work or a hint: its next idle wait is short.
func (g *levelLoop) busy() { g.idle = 0 }

// levelOf returns the loop's level prio, making it the first time.
func (g *levelLoop) levelOf(prio int) *level {
	lv := g.levels[prio]
	if lv == nil {
		lv = &level{prio: prio}
		g.levels[prio] = lv
	}
	return lv
}

// reorder lists the levels that have candidates, highest first. A level
// left out has nothing queued, so it is owed nothing.
func (g *levelLoop) reorder() {
	g.order = g.order[:0]
	for _, lv := range g.levels {
		if lv.fixed == nil && len(lv.keys) == 0 {
			lv.owed = 0
			continue
		}
		g.order = append(g.order, lv)
	}
	slices.SortFunc(g.order, func(a, b *level) int { return cmp.Compare(b.prio, a.prio) })
}

// step is one fetch of a plan: the i-th level of the order, for one message
// only when share is set (a lower level's owed share), else for every slot
// left.
type step struct {
	i     int
	share bool
}

// plan is the order of one round: every level owed its share first (one
// message each, lowest first), then every level highest first.
func (g *levelLoop) plan() []step {
	var out []step
	for i := len(g.order) - 1; i > 0; i-- {
		if g.order[i].owed >= levelShareEvery {
			out = append(out, step{i: i, share: true})
		}
	}
	for i := range g.order {
		out = append(out, step{i: i})
	}
	return out
}

// asked records that level i was asked (it had its chance: it is owed
// nothing).
func (g *levelLoop) asked(i int) { g.order[i].owed = 0 }

// skipped records that level i was not asked in a round because the levels
// before it took every slot; taken is how many messages the round took
// before it.
func (g *levelLoop) skipped(i, taken int) { g.order[i].owed += taken }

// candidates are the sources of level i that may have messages: the front
// lanes of its keys, and its fixed source and the other active keys,
// lowest pass first; less those that gave fewer messages than asked since
// the last discovery (empty, or a key at its maximum).
func (g *levelLoop) candidates(i int) (fronts, others []*keySource) {
	lv := g.order[i]
	if lv.fixed != nil && (!lv.fixed.empty || lv.fixed.sticky) {
		others = append(others, lv.fixed)
	}
	for _, ks := range lv.keys {
		switch {
		case ks.empty && !ks.sticky:
		case ks.front:
			fronts = append(fronts, ks)
		default:
			others = append(others, ks)
		}
	}
	slices.SortStableFunc(others, func(a, b *keySource) int { return cmp.Compare(a.pass, b.pass) })
	return fronts, others
}

// minPass is the lowest pass of level prio's sources (0 without any),
// where a key new to the loop starts.
func (g *levelLoop) minPass(prio int) float64 {
	lv := g.levels[prio]
	if lv == nil {
		return 0
	}
	lowest := math.Inf(1)
	if lv.fixed != nil {
		lowest = lv.fixed.pass
	}
	for _, ks := range lv.keys {
		lowest = min(lowest, ks.pass)
	}
	if math.IsInf(lowest, 1) {
		return 0
	}
	return lowest
}

// primed reports whether every loop makes the source of key at level prio
// at its start (refresh): the default tenant's key at 0, where most work
// lands, and at 1, asked every round.
func primed(prio int, key string) bool { return key == DefaultTenant && (prio == 0 || prio == 1) }

// refresh reads the queue's subjects when the last reading is older than
// keyDiscoveryEvery, makes the consumers of levels and keys new to the
// loop, and orders the levels that have messages.
func (p *Puller) refresh(ctx context.Context, g *levelLoop) error {
	if g.queue == "" {
		g.levels[0].fixed.empty = false // the worker's subject is always asked
		return nil
	}
	if !g.primed {
		// Most queues serve mostly the default tenant: an idle loop waits
		// on its key until another key delivers.
		ks, err := p.keyedSource(ctx, g, g.queue, 0, DefaultTenant)
		if err != nil {
			return err
		}
		g.last, g.primed = ks, true
		// The default tenant's priority-1 work is asked for every round, as
		// is unkeyed priority-1 work (children), not only once discovered:
		// such a task so overtakes the normal backlog at the next round.
		if g.highDefault, err = p.keyedSource(ctx, g, g.queue, 1, DefaultTenant); err != nil {
			return err
		}
		g.highDefault.sticky = true
	}
	hinted := g.hinted.Swap(false)
	if hinted {
		g.busy()
	}
	if !hinted && time.Since(g.discovered) < keyDiscoveryEvery {
		return nil
	}
	found, err := p.discover(ctx, g.queue)
	if err != nil {
		return err
	}
	g.discovered = time.Now()
	active := map[int][]*keySource{}
	for prio, keys := range found.levels {
		if active[prio], err = p.activate(ctx, g, g.levelOf(prio), keys); err != nil {
			return err
		}
	}
	if !slices.Contains(active[1], g.highDefault) {
		active[1] = append(active[1], g.highDefault)
	}
	for prio, lv := range g.levels {
		lv.keys = active[prio]
		if lv.fixed != nil {
			lv.fixed.empty = false
		}
	}
	g.reorder()
	return nil
}

// activate returns lv's sources of the keys ("": unkeyed) whose subjects
// hold messages, in key order, making those new to the loop. A source is
// asked until it gives fewer messages than asked, except a key's with a
// maximum whose messages all run (drained): that one is asked again at
// most every drainedProbeEvery, which finds a message whose worker was
// lost (the consumer's counts do not show it before it is redelivered).
func (p *Puller) activate(ctx context.Context, g *levelLoop, lv *level, keys map[string]bool) ([]*keySource, error) {
	var out []*keySource
	for _, key := range slices.Sorted(maps.Keys(keys)) {
		if key == "" && lv.fixed != nil {
			continue // a fixed level's unkeyed source is always a candidate
		}
		ks, err := p.keyedSource(ctx, g, g.queue, lv.prio, key)
		if err != nil {
			return nil, err
		}
		ks.empty = false
		if ks.gate != nil && time.Since(ks.probed) < drainedProbeEvery {
			if ks.empty, err = p.drained(ctx, ks.source); err != nil {
				return nil, err
			}
		}
		if ks.gate != nil && !ks.empty {
			ks.probed = time.Now()
		}
		out = append(out, ks)
	}
	return out, nil
}
