package fleet

// Bounds of the follow-ups of an ended task (Limits.MaxFollowups): a task
// that succeeded or failed takes a new input and runs again as a new round
// of its session, at most this many times.
const (
	DefaultMaxFollowups = 10
	MaxFollowupsCap     = 1000
)

// Followups returns how many follow-ups of the ended task l allows.
func (l Limits) Followups() int {
	if l.MaxFollowups == 0 {
		return DefaultMaxFollowups
	}
	return l.MaxFollowups
}
