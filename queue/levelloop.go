package queue

import (
	"context"
	"math"
	"slices"
	"time"
)

// bandLoop is the state of one Serve loop over a group of sources in
// preference order (a queue's bands, highest first; or the worker's subject
// alone): what each lower band is owed (bandShareEvery), which source
// delivered last (the one an idle loop waits on) and, for a queue, the
// concurrency keys it serves with their passes (fairness.go). It belongs to
// its loop's goroutine.
type bandLoop struct {
	queue string       // "" for the worker's subject
	src   []*keySource // per band (or the worker's subject): the unkeyed source
	owed  []int        // per band: messages taken from bands before it since it was last asked
	last  *keySource   // the source that last delivered; the idle wait is on it

	keyed       map[string]*keySource // by subject, every key source made
	band        map[string]Band       // by subject
	active      map[Band][]*keySource // key sources whose subject held messages at the last discovery
	discovered  time.Time
	primed      bool       // the default tenant's key sources are made (refresh)
	highDefault *keySource // the default tenant's key in the high band, asked every round
}

// keysOf is band i's key sources: those with messages at the last
// discovery, and the default tenant's high one.
func (g *bandLoop) keysOf(i int) []*keySource {
	keys := g.active[g.bandAt(i)]
	if g.highDefault == nil || g.bandAt(i) != BandHigh || slices.Contains(keys, g.highDefault) {
		return keys
	}
	return append(slices.Clip(keys), g.highDefault)
}

func newBandLoop(queue string, src []*source) *bandLoop {
	g := &bandLoop{queue: queue, owed: make([]int, len(src)), keyed: map[string]*keySource{}, band: map[string]Band{}}
	for _, s := range src {
		g.src = append(g.src, &keySource{source: s, weight: 1})
	}
	g.last = g.src[0]
	if len(src) == len(bandsHighFirst) {
		g.last = g.src[1]      // the normal band, where most work lands
		g.src[0].sticky = true // children of priority-0 parents
	}
	return g
}

// step is one fetch of a plan: band i, for one message only when share is
// set (a lower band's owed share), else for every slot left.
type step struct {
	i     int
	share bool
}

// plan is the order of one round: every band owed its share first (one
// message each, lowest first), then every band highest first.
func (g *bandLoop) plan() []step {
	var out []step
	for i := len(g.src) - 1; i > 0; i-- {
		if g.owed[i] >= bandShareEvery {
			out = append(out, step{i: i, share: true})
		}
	}
	for i := range g.src {
		out = append(out, step{i: i})
	}
	return out
}

// asked records that band i was asked (it had its chance: it is owed
// nothing).
func (g *bandLoop) asked(i int) { g.owed[i] = 0 }

// skipped records that band i was not asked in a round because the bands
// before it took every slot; taken is how many messages the round took
// before it.
func (g *bandLoop) skipped(i, taken int) { g.owed[i] += taken }

// bandAt is the band of the loop's i-th source.
func (g *bandLoop) bandAt(i int) Band {
	if g.queue == "" {
		return BandNormal
	}
	return bandsHighFirst[i]
}

// candidates are the sources of band i that may have messages, lowest pass
// first: the unkeyed source and the active keys, less those that gave fewer
// messages than asked since the last discovery (empty, or a key at its
// maximum).
func (g *bandLoop) candidates(i int) []*keySource {
	var out []*keySource
	if !g.src[i].empty || g.src[i].sticky {
		out = append(out, g.src[i])
	}
	for _, ks := range g.keysOf(i) {
		if !ks.empty || ks.sticky {
			out = append(out, ks)
		}
	}
	slices.SortStableFunc(out, func(a, b *keySource) int {
		switch {
		case a.pass < b.pass:
			return -1
		case a.pass > b.pass:
			return 1
		}
		return 0
	})
	return out
}

// minPass is the lowest pass of band b's active sources (0 without any),
// where a key new to the loop starts.
func (g *bandLoop) minPass(b Band) float64 {
	lowest := math.Inf(1)
	for _, ks := range g.active[b] {
		lowest = min(lowest, ks.pass)
	}
	for i, s := range g.src {
		if g.bandAt(i) == b {
			lowest = min(lowest, s.pass)
		}
	}
	if math.IsInf(lowest, 1) {
		return 0
	}
	return lowest
}

// refresh reads the queue's keyed subjects when the last reading is older
// than keyDiscoveryEvery, and makes the consumers of keys new to the loop.
func (p *Puller) refresh(ctx context.Context, g *bandLoop) error {
	if g.queue == "" {
		g.src[0].empty = false // the worker's subject is always asked
		return nil
	}
	if !g.primed {
		// Most queues serve mostly the default tenant: an idle loop waits
		// on its key until another key delivers.
		ks, err := p.keyedSource(ctx, g, g.queue, BandNormal, DefaultTenant)
		if err != nil {
			return err
		}
		g.last, g.primed = ks, true
		// The default tenant's high work is asked for every round, as is
		// unkeyed high work, not only once discovered: a high task so
		// overtakes the normal backlog at the next round.
		if g.highDefault, err = p.keyedSource(ctx, g, g.queue, BandHigh, DefaultTenant); err != nil {
			return err
		}
		g.highDefault.sticky = true
	}
	if time.Since(g.discovered) < keyDiscoveryEvery {
		return nil
	}
	found, err := p.discover(ctx, g.queue)
	if err != nil {
		return err
	}
	g.discovered = time.Now()
	for _, s := range g.src {
		s.empty = false
	}
	active := map[Band][]*keySource{}
	for _, b := range bandsHighFirst {
		for key := range found[b] {
			ks, err := p.keyedSource(ctx, g, g.queue, b, key)
			if err != nil {
				return err
			}
			ks.empty = false
			if ks.capped {
				if err := ks.readRoom(ctx); err != nil {
					return err
				}
				ks.empty = ks.room == 0
			}
			active[b] = append(active[b], ks)
		}
	}
	g.active = active
	return nil
}
