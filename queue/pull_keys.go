package queue

import (
	"context"
	"maps"
	"slices"
)

// keyedNow returns the sources of the concurrency keys of every queue of
// p whose subjects hold messages now, bands highest first and keys in
// order, making their consumers the first time. Pull and Claim ask them
// after the unkeyed sources: a root task's messages are keyed (its tenant,
// or its spec's concurrency_key), so one-at-a-time pulls would otherwise
// never see them. Serve's loops discover keys on their own (bandloop.go).
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
		for _, b := range bandsHighFirst {
			for _, key := range slices.Sorted(maps.Keys(found[b])) {
				s, err := p.pullKeySource(ctx, q, b, key)
				if err != nil {
					return nil, err
				}
				out = append(out, s)
			}
		}
	}
	return out, nil
}

// pullKeySource is keyedNow's source of key in band b of queue q, kept
// for the Puller's life.
func (p *Puller) pullKeySource(ctx context.Context, q string, b Band, key string) (*source, error) {
	subj := p.c.subj.TasksKey(q, b, key)
	p.pullMu.Lock()
	defer p.pullMu.Unlock()
	if s := p.pullKeyed[subj]; s != nil {
		return s, nil
	}
	s, _, err := p.newKeySource(ctx, q, b, key)
	if err != nil {
		return nil, err
	}
	if p.pullKeyed == nil {
		p.pullKeyed = map[string]*source{}
	}
	p.pullKeyed[subj] = s
	return s, nil
}
