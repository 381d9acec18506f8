package search

import (
	"container/heap"
	"sort"
)

// topN keeps the n best items seen (by before), in bounded memory: a heap
// whose root is the worst item kept. seen counts every item offered.
type topN[T any] struct {
	n      int
	before func(a, b T) bool // a ranks before (is better than) b
	items  []T
	seen   int
}

func newTopN[T any](n int, before func(a, b T) bool) *topN[T] {
	return &topN[T]{n: n, before: before}
}

// add offers one item.
func (t *topN[T]) add(v T) {
	t.seen++
	if len(t.items) < t.n {
		heap.Push((*topHeap[T])(t), v)
		return
	}
	if t.n > 0 && t.before(v, t.items[0]) {
		t.items[0] = v
		heap.Fix((*topHeap[T])(t), 0)
	}
}

// sorted returns the kept items, best first.
func (t *topN[T]) sorted() []T {
	out := append([]T(nil), t.items...)
	sort.Slice(out, func(i, j int) bool { return t.before(out[i], out[j]) })
	return out
}

// truncated reports whether items were dropped.
func (t *topN[T]) truncated() bool { return t.seen > len(t.items) }

// topHeap adapts topN to container/heap with the worst item at the root.
type topHeap[T any] topN[T]

func (h *topHeap[T]) Len() int           { return len(h.items) }
func (h *topHeap[T]) Less(i, j int) bool { return h.before(h.items[j], h.items[i]) }
func (h *topHeap[T]) Swap(i, j int)      { h.items[i], h.items[j] = h.items[j], h.items[i] }
func (h *topHeap[T]) Push(x any)         { h.items = append(h.items, x.(T)) }
func (h *topHeap[T]) Pop() any {
	v := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	return v
}
