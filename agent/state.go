package agent

import "slices"

// State is a session's lifecycle state.
type State string

const (
	StateIdle          State = "IDLE"           // waiting for input
	StateProcessing    State = "PROCESSING"     // running the loop
	StateAwaitingInput State = "AWAITING_INPUT" // the model asked the user a question
	StateClosed        State = "CLOSED"         // terminated; no further input
)

// transitions lists the legal moves; any state may go to CLOSED (abort).
var transitions = map[State][]State{
	StateIdle:          {StateProcessing, StateClosed},
	StateProcessing:    {StateProcessing, StateAwaitingInput, StateIdle, StateClosed},
	StateAwaitingInput: {StateProcessing, StateClosed},
	StateClosed:        {},
}

// canTransition reports whether from -> to is legal.
func canTransition(from, to State) bool {
	return slices.Contains(transitions[from], to)
}

// setStateLocked moves the session to `to`, or returns a *TransitionError.
// The caller holds s.mu.
func (s *Session) setStateLocked(to State) error {
	if !canTransition(s.state, to) {
		return &TransitionError{From: s.state, To: to}
	}
	s.state = to
	return nil
}
