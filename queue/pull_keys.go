package queue

import (
	"cmp"
	"context"
	"maps"
	"slices"
)

// keyedNow returns the sources of every queue of p whose subjects made on
// demand (levels other than the fixed ones, and concurrency keys) hold
// messages now, with the fixed levels' sources, highest level first and
// keys in order, making their consumers the first time. Pull and Claim ask
// them after the worker's subject: a root task's messages are keyed (its
// tenant, or its spec's concurrency_key), so one-at-a-time pulls would
// otherwise never see them. Serve's loops discover keys on their own
// (levelloop.go).
func (p *Puller) keyedNow(ctx context.Context) ([]*source, error) {
	var out []*source
	for _, g := range p.groups {
		q := p.queueOf(g)
		if q == "" {
			continue
		}
		found, err := p.discover(ctx, q)
		if err != nil {
			return nil, err
		}
		for _, prio := range slices.Sorted(maps.Keys(found.levels)) {
			for _, key := range slices.Sorted(maps.Keys(found.levels[prio])) {
				if key == "" && slices.Contains(fixedLevels, prio) {
					continue // among p.sources
				}
				s, err := p.pullKeySource(ctx, q, prio, key)
				if err != nil {
					return nil, err
				}
				out = append(out, s)
			}
		}
	}
	for _, s := range p.sources {
		if s.name != workerToken {
			out = append(out, s)
		}
	}
	// Highest level first; within a level, front lanes first.
	slices.SortStableFunc(out, func(a, b *source) int {
		return cmp.Or(cmp.Compare(b.prio, a.prio), cmp.Compare(lane(a), lane(b)))
	})
	return out, nil
}

// lane orders a level's sources: a front lane (0) before the others (1).
func lane(s *source) int {
	if s.front {
		return 0
	}
	return 1
}

// pullKeySource is keyedNow's source of key ("": none) at level prio of
// queue q, kept for the Puller's life.
func (p *Puller) pullKeySource(ctx context.Context, q string, prio int, key string) (*source, error) {
	subj := p.c.subj.tasksAt(q, prio, key)
	p.pullMu.Lock()
	defer p.pullMu.Unlock()
	if s := p.pullKeyed[subj]; s != nil {
		return s, nil
	}
	s, _, err := p.newKeySource(ctx, q, prio, key)
	if err != nil {
		return nil, err
	}
	if p.pullKeyed == nil {
		p.pullKeyed = map[string]*source{}
	}
	p.pullKeyed[subj] = s
	return s, nil
}
