package queue

import (
	"fmt"
	"strconv"
	"strings"
)

// Priority levels. Every priority of a shared queue is a level with
// subjects of its own on TASKS, so a worker can take the highest first:
//
//	<prefix>.tasks.<queue>                    priority 0, no key   consumer queue-<queue> (the layout before levels)
//	<prefix>.tasks.<queue>.high               priority 1, no key   consumer band-high-<queue>
//	<prefix>.tasks.<queue>.low                priority -1, no key  consumer band-low-<queue>
//	<prefix>.tasks.<queue>.p<n>               priority n, no key   consumer key-<hash>, made on demand
//	<prefix>.tasks.<queue>.<level>.<key>      a concurrency key (fairness.go) at a level
//
// where <level> is "normal" for 0, "high" for 1, "low" for -1 and p<n>
// otherwise (p50, p-7). Messages without a key are children (a child runs
// at its parent's priority + 1), so the subjects of levels 1, 0 and -1 are
// the busiest unkeyed ones and have fixed consumers, made by NewPuller; the
// others are made by the first worker that sees a message on them.
//
// A worker takes from the highest level that has a message (see Serve); a
// lower level that waited gets a bounded share (levelShareEvery). Within a
// level, concurrency keys share by weight; within a key, order is
// publication order. Levels 0, 1 and -1 keep the subjects of the three
// priority bands that came before levels (normal, high, low), so messages
// queued by an older dispatcher are served after an upgrade.

// The fixed levels of a queue, highest first: each has an unkeyed consumer
// made by NewPuller.
var fixedLevels = []int{1, 0, -1}

// levelToken is the subject token of a priority level.
func levelToken(prio int) string {
	switch prio {
	case 0:
		return "normal"
	case 1:
		return "high"
	case -1:
		return "low"
	}
	return "p" + strconv.Itoa(prio)
}

// parseLevel reads a level token; ok is false when tok is none.
func parseLevel(tok string) (prio int, ok bool) {
	switch tok {
	case "normal":
		return 0, true
	case "high":
		return 1, true
	case "low":
		return -1, true
	}
	digits, found := strings.CutPrefix(tok, "p")
	if !found {
		return 0, false
	}
	n, err := strconv.Atoi(digits)
	if err != nil || n == 0 || n == 1 || n == -1 || strconv.Itoa(n) != digits {
		return 0, false
	}
	return n, true
}

// ToQueueAt targets the level of priority in the shared queue name; ToQueue
// is ToQueueAt(name, 0).
func ToQueueAt(name string, priority int) Target { return Target{queue: name, priority: priority} }

// TasksLevel returns the unkeyed subject of one priority level of a queue:
// Tasks(queue) for 0, <prefix>.tasks.<queue>.<level> for the others.
func (s Subjects) TasksLevel(queue string, prio int) string {
	if prio == 0 {
		return s.Tasks(queue)
	}
	return s.Tasks(queue) + "." + levelToken(prio)
}

// fixedConsumer names the durable consumer of a fixed level's unkeyed
// subject: the names of the bands before levels. Level 0's is the consumer
// every queue had before bands; the others start with "band-", which no
// queue or worker consumer name does.
func fixedConsumer(queue string, prio int) string {
	switch prio {
	case 0:
		return queueConsumer(queue)
	case 1, -1:
		return "band-" + levelToken(prio) + "-" + queue
	}
	panic(fmt.Sprintf("queue: level %d has no fixed consumer", prio))
}

// levelShareEvery bounds how long a lower level waits while higher levels
// are busy: after a worker's loop of a queue has taken this many messages
// from higher levels without asking a lower level that has messages (its
// free slots all went higher), it asks that level first for one message.
// A lower level with queued work so gets at least one message of every
// levelShareEvery+1 rounds' worth, and never starves.
const levelShareEvery = 10
