package queue

// bandLoop is the state of one Serve loop over a group of sources in
// preference order (a queue's bands, highest first; or the worker's subject
// alone): what each lower band is owed (bandShareEvery) and which source
// delivered last (the one an idle loop waits on). It belongs to its loop's
// goroutine.
type bandLoop struct {
	src  []*source
	owed []int // per source: messages taken from sources before it since it was last asked
	last int   // index of the source that last delivered; the idle wait is on it
}

func newBandLoop(src []*source) *bandLoop {
	last := 0
	if len(src) == len(bandsHighFirst) {
		last = 1 // the normal band, where most work lands
	}
	return &bandLoop{src: src, owed: make([]int, len(src)), last: last}
}

// step is one fetch of a plan: source i, for one message only when share
// is set (a lower band's owed share), else for every slot left.
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

// asked records that source i was asked (it had its chance: it is owed
// nothing) and gave got messages.
func (g *bandLoop) asked(i, got int) {
	g.owed[i] = 0
	if got > 0 {
		g.last = i
	}
}

// skipped records that source i was not asked in a round because the
// sources before it took every slot; taken is how many messages the round
// took before it.
func (g *bandLoop) skipped(i, taken int) {
	g.owed[i] += taken
}
