package dispatcher

import "time"

// SetConflictTiming makes conflict checks read every poll for window and
// act after that many reads in a row saw a conflict, until the returned
// restore.
func SetConflictTiming(poll, window time.Duration, reads int) (restore func()) {
	p, w, r := conflictPoll, conflictWindow, conflictReads
	conflictPoll, conflictWindow, conflictReads = poll, window, reads
	return func() { conflictPoll, conflictWindow, conflictReads = p, w, r }
}
