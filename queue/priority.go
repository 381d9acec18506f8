package queue

import "fmt"

// Priority bands. A shared queue has three subjects on TASKS, one per band:
//
//	<prefix>.tasks.<queue>.high   priority > 0   consumer band-high-<queue>
//	<prefix>.tasks.<queue>        priority = 0   consumer queue-<queue> (the layout before bands)
//	<prefix>.tasks.<queue>.low    priority < 0   consumer band-low-<queue>
//
// A worker takes from the highest band that has a message (see Serve). The
// normal band keeps the subject and consumer every queue had before bands,
// so messages queued by an older dispatcher are served after an upgrade,
// and an older worker still serves the normal band. Within a band, order
// is publication order.

// Band is a priority band of a shared queue.
type Band int

// The bands, lowest first.
const (
	BandLow Band = iota - 1
	BandNormal
	BandHigh
)

// bandsHighFirst is the order a worker asks the bands of a queue.
var bandsHighFirst = []Band{BandHigh, BandNormal, BandLow}

// BandOf maps a task's priority to its band: above 0 high, 0 normal, below 0 low.
func BandOf(priority int) Band {
	switch {
	case priority > 0:
		return BandHigh
	case priority < 0:
		return BandLow
	}
	return BandNormal
}

// String names the band: "high", "normal" or "low".
func (b Band) String() string {
	switch b {
	case BandHigh:
		return "high"
	case BandLow:
		return "low"
	case BandNormal:
		return "normal"
	}
	return fmt.Sprintf("band(%d)", int(b))
}

// ToQueueAt targets the band of priority in the shared queue name; ToQueue
// is ToQueueAt(name, 0).
func ToQueueAt(name string, priority int) Target { return Target{queue: name, band: BandOf(priority)} }

// TasksBand returns the subject of one band of a queue: Tasks(queue) for
// the normal band, <prefix>.tasks.<queue>.high or .low for the others.
func (s Subjects) TasksBand(queue string, b Band) string {
	if b == BandNormal {
		return s.Tasks(queue)
	}
	return s.Tasks(queue) + "." + b.String()
}

// bandConsumer names the durable consumer of one band of a queue. The
// normal band's is the consumer every queue had before bands; the others
// start with "band-", which no queue or worker consumer name does.
func bandConsumer(queue string, b Band) string {
	if b == BandNormal {
		return queueConsumer(queue)
	}
	return "band-" + b.String() + "-" + queue
}

// bandShareEvery bounds how long a lower band waits while higher bands are
// busy: after a worker's loop of a queue has taken this many messages from
// higher bands without asking a lower band (its free slots all went
// higher), it asks that band first for one message. A lower band with
// queued work so gets at least one of every bandShareEvery+1 messages a
// worker takes from its queue, and never starves.
const bandShareEvery = 10
