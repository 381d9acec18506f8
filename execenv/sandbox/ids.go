package sandbox

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// Default range of outside uids (and gids) a root worker gives its
// sandboxes when it is given none (see IDs).
const (
	DefaultUIDFirst = 200000
	DefaultUIDLast  = 265535
)

// InnerID is the uid and gid a sandboxed command has inside its user
// namespace, whatever the outside one.
const InnerID = 1000

// ParseUIDRange reads "first-last" (inclusive, first >= 1000, last <
// 2^31): a range of uids no account on the host has, which a root worker
// gives its sandboxes.
func ParseUIDRange(s string) (first, last int, err error) {
	a, b, ok := strings.Cut(strings.TrimSpace(s), "-")
	if ok {
		first, err = strconv.Atoi(strings.TrimSpace(a))
		if err == nil {
			last, err = strconv.Atoi(strings.TrimSpace(b))
		}
	}
	switch {
	case !ok || err != nil:
		return 0, 0, fmt.Errorf("uid range %q must be FIRST-LAST, such as %q", s, fmt.Sprintf("%d-%d", DefaultUIDFirst, DefaultUIDLast))
	case first < 1000 || last >= 1<<31-1 || first >= last:
		return 0, 0, fmt.Errorf("uid range %q must have 1000 <= FIRST < LAST < 2147483647 (uids below 1000 are the system's; FIRST owns what tasks share)", s)
	}
	return first, last, nil
}

// IDs hands out the uids outside the sandbox of a root worker's tasks:
// one per key (a task tree, whose tasks share a workspace), held while
// any task of the key runs (Acquire counts references), and released to
// be given again after every other free uid of the range was (round
// robin), so that a uid returns to use as late as possible. The first
// uid of the range is not given to a task: it owns what tasks share
// (Shared). Safe for concurrent use.
type IDs struct {
	first, last int

	mu    sync.Mutex
	next  int               // where the search for a free uid starts
	byKey map[string]*lease // held uids
	used  map[int]bool
}

type lease struct {
	uid  int
	refs int
}

// NewIDs returns the allocator of [first, last] (see ParseUIDRange):
// tasks get first+1 to last.
func NewIDs(first, last int) *IDs {
	return &IDs{first: first + 1, last: last, next: first + 1, byKey: map[string]*lease{}, used: map[int]bool{}}
}

// Shared is the uid that owns, on disk, what every task of a root
// worker writes in a shared writable directory (Settings.Writable),
// which each task sees as its own through an idmapped mount.
func (a *IDs) Shared() int { return a.first - 1 }

// ErrNoIDs means every uid of the range is held by a running task tree.
var ErrNoIDs = errors.New("sandbox: every uid of the sandbox uid range is in use by a running task; widen sandbox_uid_range or lower sessions")

// Acquire returns key's uid, taking a free one when key holds none, and
// the function that gives this reference back (safe to call twice).
func (a *IDs) Acquire(key string) (uid int, release func(), err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	l := a.byKey[key]
	if l == nil {
		n := a.last - a.first + 1
		for i := 0; i < n && l == nil; i++ {
			u := a.first + (a.next-a.first+i)%n
			if !a.used[u] {
				l = &lease{uid: u}
				a.used[u], a.byKey[key] = true, l
				a.next = a.first + (u-a.first+1)%n
			}
		}
		if l == nil {
			return 0, nil, ErrNoIDs
		}
	}
	l.refs++
	var once sync.Once
	return l.uid, func() { once.Do(func() { a.release(key) }) }, nil
}

func (a *IDs) release(key string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	l := a.byKey[key]
	if l == nil {
		return
	}
	if l.refs--; l.refs == 0 {
		delete(a.byKey, key)
		delete(a.used, l.uid)
	}
}

// defaultIDs gives a uid to each sandbox of a root worker whose Settings
// name no IDs.
var defaultIDs = sync.OnceValue(func() *IDs { return NewIDs(DefaultUIDFirst, DefaultUIDLast) })
