package worker

import "github.com/google/uuid"

// LoadHistory is loadHistory for the tests of package worker_test: the
// recorded turns of a session, decoded.
var LoadHistory = loadHistory

// SetAfterEnd makes w call fn with the task's id after it wrote a task's
// end and before it removed the task's workspace.
func SetAfterEnd(w *Worker, fn func(uuid.UUID)) { w.afterEnd.Store(&fn) }
