package agent

import (
	"context"
	"errors"
	"strings"

	"github.com/agentfleet/agentfleet/llm"
)

// process runs one input (nil: continue the recorded one) and its
// follow-ups, then settles the session's state. The caller holds the run slot.
func (s *Session) process(ctx context.Context, input *string) (Outcome, error) {
	inCtx, cancel := context.WithCancelCause(ctx)
	stopAbort := context.AfterFunc(s.ctx, func() { cancel(ErrAborted) })
	defer stopAbort()
	defer cancel(nil)

	s.mu.Lock()
	if err := s.setStateLocked(StateProcessing); err != nil {
		s.mu.Unlock()
		return Outcome{State: StateClosed}, ErrClosed
	}
	s.inputCancel, s.warned = cancel, false
	first := !s.started
	s.started = true
	s.mu.Unlock()
	if first {
		s.emit(Event{Kind: EventSessionStart, State: StateProcessing, Text: s.model})
		s.runHooks(inCtx, HookEvent{Point: HookSessionStart})
	}

	var out Outcome
	err := s.runInputs(inCtx, input, &out)
	return s.settle(inCtx, out, err)
}

// runInputs processes input, then each queued follow-up, until one stops
// for a reason other than completion.
func (s *Session) runInputs(ctx context.Context, input *string, out *Outcome) error {
	for {
		if err := s.runInput(ctx, input, out); err != nil {
			return err
		}
		if out.Stop != StopCompleted && out.Stop != StopAwaitingInput {
			return nil
		}
		next, ok := s.popFollowUp()
		if !ok {
			return nil
		}
		input = &next
	}
}

// runInput runs the agentic loop for one input: model call, tool round,
// repeat until a text-only answer or a limit.
func (s *Session) runInput(ctx context.Context, input *string, out *Outcome) error {
	round := 0
	if input != nil {
		s.watch.reset()
		if err := s.answerPending(ctx, "not run: a new input arrived first"); err != nil {
			return err
		}
		if err := s.appendTurn(ctx, Turn{Kind: TurnUser, Text: *input}); err != nil {
			return err
		}
		s.emit(Event{Kind: EventUserInput, Text: *input})
		s.runHooks(ctx, HookEvent{Point: HookUserPromptSubmit, Prompt: *input})
	}
	if err := s.drainSteering(ctx); err != nil {
		return err
	}
	if pending := pendingCalls(s.view()); len(pending) > 0 {
		round++
		if err := s.runTools(ctx, pending, round); err != nil {
			return stalled(err, out)
		}
	}
	var turns turnSpans
	defer turns.end()
	for {
		ctx := turns.next(ctx, round)
		if stop := s.checkLimits(ctx, round); stop != "" {
			out.Stop = stop
			return nil
		}
		req, err := s.prepareRequest(ctx)
		if err != nil {
			return err
		}
		resp, err := s.callFitting(ctx, req)
		if err == nil {
			resp, err = s.retryCutCall(ctx, req, resp)
		}
		if err != nil {
			return err
		}
		shown := out.Text
		if err := s.recordAssistant(ctx, resp, out); err != nil {
			return err
		}
		calls := resp.ToolCalls()
		if len(calls) == 0 {
			if again, err := s.endMemoryFlush(ctx, out, shown); again || err != nil {
				if err != nil {
					return err
				}
				continue
			}
			again, err := s.continueCut(ctx, resp, out)
			if err != nil {
				return err
			}
			if again {
				continue
			}
			stop, again, err := s.checkResult(ctx, out)
			if err != nil {
				return err
			}
			if again {
				continue
			}
			if stop == "" {
				stop = completion(out.Text)
			}
			out.Stop = stop
			return nil
		}
		round++
		out.Rounds++
		if err := s.runTools(ctx, calls, round); err != nil {
			return stalled(err, out)
		}
	}
}

// runTools executes one round, records its results, drains steering and
// checks for loops.
func (s *Session) runTools(ctx context.Context, calls []llm.ToolCall, round int) error {
	s.markCut()
	results, parkErr := s.executeTools(ctx, calls, round)
	if errors.Is(context.Cause(ctx), ErrAborted) {
		// Left unanswered, as a crash would leave it: the session that
		// resumes this history runs the round again. The interrupted
		// calls' outputs describe the abort, not what the tools do.
		return ErrAborted
	}
	if len(results) > 0 {
		full := s.takeFull(results)
		if err := s.appendTurn(ctx, Turn{Kind: TurnToolResults, Results: results, FullOutputs: full}); err != nil {
			return err
		}
		if full != nil {
			s.registerReadToolOutput()
		}
	}
	if err := s.recordPermissions(ctx); err != nil {
		return err
	}
	if parkErr != nil {
		return parkErr
	}
	if err := s.drainSteering(ctx); err != nil {
		return err
	}
	if err := s.detectLoop(ctx); err != nil {
		return err
	}
	return s.watchProgress(ctx, calls, results, round)
}

// stalled maps errNoProgress to the StopNoProgress outcome; other errors
// pass through.
func stalled(err error, out *Outcome) error {
	if errors.Is(err, errNoProgress) {
		out.Stop = StopNoProgress
		return nil
	}
	return err
}

func isOverflowWarned(err error) bool {
	var w *overflowWarned
	return errors.As(err, &w)
}

// completion tells an answer from a question to the user: a text-only
// answer whose last line ends with '?' moves the session to AWAITING_INPUT.
func completion(text string) StopReason {
	if strings.HasSuffix(strings.TrimSpace(text), "?") {
		return StopAwaitingInput
	}
	return StopCompleted
}

// recordAssistant appends the assistant turn and checks context use.
func (s *Session) recordAssistant(ctx context.Context, resp *llm.Response, out *Outcome) error {
	msg := resp.Message
	msg.Role = llm.RoleAssistant
	t := Turn{
		Kind: TurnAssistant, Text: resp.Text(), ToolCalls: resp.ToolCalls(), Reasoning: resp.Reasoning(),
		Usage: resp.Usage, ResponseID: resp.ID, Message: &msg, RequestChars: s.cw.lastChars, Model: resp.Model,
		Finish: resp.FinishReason.Reason,
	}
	if err := s.appendTurn(ctx, t); err != nil {
		return err
	}
	out.Text, out.Turns, out.Usage = t.Text, out.Turns+1, out.Usage.Add(resp.Usage)
	s.checkContextUsage(resp.Usage)
	return nil
}

// drainSteering moves queued steering messages into history.
func (s *Session) drainSteering(ctx context.Context) error {
	for {
		msg, ok := s.pop(&s.steering)
		if !ok {
			return nil
		}
		if err := s.appendTurn(ctx, Turn{Kind: TurnSteering, Text: msg, Source: "host"}); err != nil {
			return err
		}
		s.emit(Event{Kind: EventSteeringInjected, Text: msg})
	}
}

func (s *Session) popFollowUp() (string, bool) { return s.pop(&s.followUps) }

func (s *Session) pop(q *[]string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(*q) == 0 {
		return "", false
	}
	msg := (*q)[0]
	*q = (*q)[1:]
	return msg, true
}

// settle maps how the loop ended to the session's next state, events and
// the error Submit returns.
func (s *Session) settle(ctx context.Context, out Outcome, err error) (Outcome, error) {
	s.mu.Lock()
	s.inputCancel = nil
	s.mu.Unlock()
	if err == nil && ctx.Err() != nil {
		err = context.Cause(ctx)
	}
	switch {
	case err == nil:
	case errors.Is(err, ErrAborted):
		out.Stop = StopAborted
		out.State = StateClosed
		return out, ErrAborted
	case errors.Is(err, ErrParked):
		out.Stop = StopParked
		s.emit(Event{Kind: EventParked})
	case ctx.Err() != nil: // interrupted by a newer input or the caller's ctx
		out.Stop = StopInterrupted
		if ferr := s.answerPending(context.WithoutCancel(ctx), "interrupted before it ran"); ferr != nil {
			err = ferr
		}
	case isOverflowWarned(err): // WARNING emitted; the session stays usable
		out.Stop = StopError
	default:
		out.Stop = StopError
		s.emit(Event{Kind: EventError, Error: err.Error(), ErrorKind: llm.KindOf(err)})
		if unrecoverable(err) {
			s.shutdown(true)
			out.State = StateClosed
			return out, err
		}
	}
	next := StateIdle
	if out.Stop == StopAwaitingInput {
		next = StateAwaitingInput
	}
	s.mu.Lock()
	if terr := s.setStateLocked(next); terr != nil && err == nil {
		err = terr
	}
	out.State = s.state
	s.mu.Unlock()
	s.emit(Event{Kind: EventInputDone, State: out.State, Stop: out.Stop, Text: out.Text, Turns: out.Turns, Usage: &out.Usage})
	return out, err
}

// answerPending records error results for calls left without one, so the
// next request is well-formed after an interruption.
func (s *Session) answerPending(ctx context.Context, why string) error {
	pending := pendingCalls(s.view())
	if len(pending) == 0 {
		return nil
	}
	results := make([]llm.ToolResult, len(pending))
	for i, c := range pending {
		results[i] = llm.ToolResult{ToolCallID: c.ID, Name: c.Name, Content: "Tool call " + why + ".", IsError: true}
	}
	return s.appendTurn(ctx, Turn{Kind: TurnToolResults, Results: results})
}
