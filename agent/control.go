package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/agentfleet/agentfleet/llm"
)

// StopReason says why processing of an input ended.
type StopReason string

const (
	StopCompleted     StopReason = "completed"      // text-only answer
	StopAwaitingInput StopReason = "awaiting_input" // the answer is a question to the user
	StopRoundLimit    StopReason = "round_limit"    // MaxToolRoundsPerInput reached
	StopTurnLimit     StopReason = "turn_limit"     // MaxTurns reached
	StopInterrupted   StopReason = "interrupted"    // a newer input or the caller's ctx stopped it
	StopAborted       StopReason = "aborted"        // Abort or Close
	StopParked        StopReason = "parked"         // waiting on a subagent elsewhere
	StopError         StopReason = "error"          // the model call failed
	// StopNoProgress: SessionConfig.NoProgressRounds tool rounds in a row
	// made no progress (see the package doc, "Progress watchdog").
	StopNoProgress StopReason = "no_progress"
)

// Outcome is the result of Submit or Continue.
type Outcome struct {
	// Text is the last assistant text of the last input processed.
	Text string
	// Stop says why the loop ended; State is the session's state afterwards.
	Stop  StopReason
	State State
	// Turns counts assistant turns (model calls) and Rounds tool rounds made
	// for this call, follow-ups included.
	Turns  int
	Rounds int
	Usage  llm.Usage
	// Structured is the final answer as compact JSON when
	// Config.ResultSchema is set and the answer matches it; Violations
	// lists what did not match when Stop is StopResultSchema.
	Structured json.RawMessage
	Violations []string
}

// Submit processes one user input and its queued follow-ups, blocking until
// they are done. While another input is processing, SessionConfig.QueueMode
// decides: queue (wait, FIFO), reject (ErrBusy) or interrupt (stop the running
// input, then run). Run it in a goroutine to steer or abort meanwhile.
// Limits end it with a nil error (see Outcome.Stop); an unrecoverable model
// error closes the session and is returned.
func (s *Session) Submit(ctx context.Context, input string) (Outcome, error) {
	if strings.TrimSpace(input) == "" {
		return Outcome{}, ErrEmptyInput
	}
	release, err := s.acquire(ctx)
	if err != nil {
		return Outcome{State: s.State()}, err
	}
	defer release()
	return s.process(ctx, &input)
}

// Continue finishes an input that a crash, park or retryable error cut
// short: it re-runs tool calls of the last assistant turn that have no
// recorded result, then calls the model again. When the history ends with a
// completed answer it returns at once with StopCompleted.
func (s *Session) Continue(ctx context.Context) (Outcome, error) {
	release, err := s.acquire(ctx)
	if err != nil {
		return Outcome{State: s.State()}, err
	}
	defer release()
	if !s.midInput() {
		out, again, err := s.recheckResult(ctx)
		if !again {
			return out, err
		}
	}
	return s.process(ctx, nil)
}

// midInput reports whether the history ends inside an input.
func (s *Session) midInput() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := withoutTrailingCompactions(s.history)
	if len(h) == 0 {
		return false
	}
	switch last := h[len(h)-1]; last.Kind {
	case TurnAssistant:
		return len(last.ToolCalls) > 0
	case TurnSystem:
		return false
	}
	return true
}

// acquire takes the run slot following the queue mode.
func (s *Session) acquire(ctx context.Context) (release func(), err error) {
	release = func() { <-s.run }
	if s.isClosing() {
		return nil, ErrClosed
	}
	select {
	case s.run <- struct{}{}:
		return s.checkOpen(release)
	default:
	}
	switch s.cfg.Session.QueueMode {
	case QueueReject:
		return nil, ErrBusy
	case QueueInterrupt:
		s.interrupt()
	default:
		if int(s.queued.Add(1)) > s.cfg.Session.MaxQueueDepth {
			s.queued.Add(-1)
			return nil, ErrQueueFull
		}
		defer s.queued.Add(-1)
	}
	select {
	case s.run <- struct{}{}:
		return s.checkOpen(release)
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-s.done:
		return nil, ErrClosed
	}
}

func (s *Session) checkOpen(release func()) (func(), error) {
	if s.isClosing() {
		release()
		return nil, ErrClosed
	}
	return release, nil
}

func (s *Session) isClosing() bool { return s.ctx.Err() != nil }

// interrupt stops the running input with ErrInterrupted.
func (s *Session) interrupt() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.inputCancel != nil {
		s.inputCancel(ErrInterrupted)
	}
}

// Steer queues a message injected after the current tool round (or before
// the first model call of the next input when idle).
func (s *Session) Steer(message string) error {
	return s.enqueue(&s.steering, message)
}

// SteerWhileBusy queues message as steering only while the session is
// processing an input, and reports whether it did. Checking and queueing
// are one step, so a message it takes is drained by that input's loop or,
// when the model was giving its final answer, left for TakeSteering.
func (s *Session) SteerWhileBusy(message string) (bool, error) {
	if strings.TrimSpace(message) == "" {
		return false, ErrEmptyInput
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != StateProcessing {
		return false, nil
	}
	s.steering = append(s.steering, message)
	return true, nil
}

// TakeSteering removes and returns the steering messages still queued. A
// message that arrives while the model gives its final answer waits for
// the session's next input; a host that will not send one takes them here
// (the fleet runs them as new inputs before its run ends).
func (s *Session) TakeSteering() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.steering
	s.steering = nil
	return q
}

// FollowUp queues an input processed after the current one completes.
func (s *Session) FollowUp(message string) error {
	return s.enqueue(&s.followUps, message)
}

func (s *Session) enqueue(q *[]string, message string) error {
	if strings.TrimSpace(message) == "" {
		return ErrEmptyInput
	}
	if s.isClosing() {
		return ErrClosed
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	*q = append(*q, message)
	return nil
}

// SetReasoningEffort changes the effort from the next model call on.
func (s *Session) SetReasoningEffort(effort string) error {
	if !validEfforts[effort] {
		return fmt.Errorf("agent: reasoning effort must be low, medium, high (or minimal, xhigh) or empty, got %q", effort)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.effort = effort
	return nil
}

// SetModel changes the model from the next model call on; "" restores the
// profile's model.
func (s *Session) SetModel(model string) {
	if model == "" {
		model = s.profile.Model()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.model = model
}

// Abort stops the session: the model stream is canceled, running commands
// are killed (SIGTERM, then SIGKILL after 2 s, by the environment), events
// are flushed, SESSION_END is emitted, subagents are closed and the state
// becomes CLOSED. It returns when that is done; it is safe to call twice.
func (s *Session) Abort() { s.shutdown(false) }

// Close ends an idle session (and aborts a running one), like Abort.
func (s *Session) Close() error {
	s.shutdown(false)
	return nil
}

// shutdown runs the graceful shutdown once, in the order the package doc
// gives under Errors. holdingRun is true when the caller is the loop owner.
func (s *Session) shutdown(holdingRun bool) {
	s.cancel()
	if !holdingRun {
		s.run <- struct{}{} // wait for the loop owner to stop
		defer func() { <-s.run }()
	}
	s.mu.Lock()
	if s.state == StateClosed {
		s.mu.Unlock()
		return
	}
	started := s.started
	s.mu.Unlock()
	if started {
		s.runHooks(context.Background(), HookEvent{Point: HookSessionStop})
	}
	s.emit(Event{Kind: EventSessionEnd, State: StateClosed})
	s.spawner.CloseAll(context.WithoutCancel(context.Background()))
	s.mu.Lock()
	_ = s.setStateLocked(StateClosed) // any -> CLOSED is always legal
	s.mu.Unlock()
	close(s.done)
	s.events.Close()
}

// unrecoverable reports the errors that close the session instead of
// returning it to IDLE (the package doc lists them under Errors).
func unrecoverable(err error) bool {
	var rec *recordError
	if errors.As(err, &rec) || contextError(err) {
		return true
	}
	switch llm.KindOf(err) {
	case llm.ErrAuthentication, llm.ErrPermission, llm.ErrQuota, llm.ErrContextLength, llm.ErrInvalidRequest:
		return true
	}
	return false
}
