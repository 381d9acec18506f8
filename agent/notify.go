package agent

// Host events: kinds the loop never emits itself, reported by the host
// program through Notify so they reach the session's subscribers in
// order with the rest.
const (
	// EventRateLimited: a model request waited for a fleet-wide rate
	// limit; Text says how long and which limit.
	EventRateLimited EventKind = "RATE_LIMITED"
	// EventModelFallback: the provider was overloaded and the request went
	// to the profile's fallback model; Text names both models.
	EventModelFallback EventKind = "MODEL_FALLBACK"
	// EventWorkspace: how the task's workspace was made before its
	// session started; Text begins "warm" (from a setup snapshot) or
	// "cold" (cloned, its setup run if it has one).
	EventWorkspace EventKind = "WORKSPACE"
)

// Notify emits a host event of kind with text. It is safe to call from
// any goroutine, also from inside a model call.
func (s *Session) Notify(kind EventKind, text string) {
	s.emit(Event{Kind: kind, Text: text})
}
