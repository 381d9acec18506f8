package agent

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/tools"
)

// executeTools runs one round of calls through the registry pipeline:
// concurrently when the profile allows it and no call mutates, else in
// order. It returns the results in call order. When a call asks to park
// (ErrParked), the calls after it are not run and the results so far are
// returned with ErrParked; in a concurrent round the other calls have run
// and their results are returned.
func (s *Session) executeTools(ctx context.Context, calls []llm.ToolCall, round int) ([]llm.ToolResult, error) {
	opts := s.execOptions()
	if s.parallel(calls) {
		results := make([]llm.ToolResult, len(calls))
		parked := make([]bool, len(calls))
		var wg sync.WaitGroup
		for i, c := range calls {
			wg.Go(func() { results[i], parked[i] = s.executeOne(ctx, c, round, opts) })
		}
		wg.Wait()
		if !slices.Contains(parked, true) {
			return results, nil
		}
		kept := results[:0]
		for i, r := range results {
			if !parked[i] {
				kept = append(kept, r)
			}
		}
		return kept, ErrParked
	}
	results := make([]llm.ToolResult, 0, len(calls))
	for _, c := range calls {
		r, parked := s.executeOne(ctx, c, round, opts)
		if parked {
			return results, ErrParked
		}
		results = append(results, r)
	}
	return results, nil
}

// parallel reports whether calls may run concurrently.
func (s *Session) parallel(calls []llm.ToolCall) bool {
	if len(calls) < 2 || !s.profile.SupportsParallelToolCalls() {
		return false
	}
	for _, c := range calls {
		if t, ok := s.registry.Get(c.Name); ok && t.Mutates {
			return false
		}
	}
	return true
}

// executeOne runs one call, emitting TOOL_CALL_START, output deltas and
// TOOL_CALL_END with the full output. parked is true when the call asked to
// park the session; its result is then not to be recorded.
func (s *Session) executeOne(ctx context.Context, call llm.ToolCall, round int, opts tools.ExecOptions) (llm.ToolResult, bool) {
	s.emit(Event{Kind: EventToolCallStart, ToolName: call.Name, CallID: call.ID, Arguments: call.Arguments, Round: round})
	// Validate, then approve, then execute: a call that cannot run (an
	// unknown tool, arguments that fail the schema) gets its error and is
	// never put to the policy or a person.
	tool, args, err := s.registry.Validate(call)
	if err != nil {
		res := llm.ToolResult{ToolCallID: call.ID, Name: call.Name, Content: err.Error(), IsError: true}
		s.emit(Event{Kind: EventToolCallEnd, ToolName: call.Name, CallID: call.ID, Output: res.Content, IsError: true, Round: round})
		return res, false
	}
	switch res, gated := s.gate(ctx, call, tool, args); gated {
	case gateParked:
		return llm.ToolResult{}, true
	case gateDenied:
		s.emit(Event{Kind: EventToolCallEnd, ToolName: call.Name, CallID: call.ID, Output: res.Content, IsError: true, Round: round})
		return res, false
	}
	var flush func()
	opts.OnOutput, flush = s.redactOutput(call)
	res, blocked := s.preToolHooks(ctx, call)
	if !blocked {
		res = s.postToolHooks(ctx, call, s.registry.Execute(ctx, call, s.env, opts))
	}
	flush()
	res = s.redactResult(res)
	if _, parked := s.parkIDs.LoadAndDelete(call.ID); parked {
		return llm.ToolResult{}, true
	}
	s.emit(Event{Kind: EventToolCallEnd, ToolName: call.Name, CallID: call.ID, Output: res.Full,
		IsError: res.IsError, Truncated: res.Truncated, Round: round})
	return res.ToolResult(), false
}

// execOptions maps the session config onto the pipeline's options.
func (s *Session) execOptions() tools.ExecOptions {
	cfg := s.cfg.Session
	def := cfg.DefaultCommandTimeout
	if t := time.Duration(s.cmdTime.Load()); t > 0 {
		def = t
	}
	if def == 0 {
		def = s.profile.DefaultCommandTimeout()
	}
	if def == 0 {
		def = 10 * time.Second
	}
	opts := tools.ExecOptions{Reads: s.reads, Settings: tools.Settings{
		DefaultCommandTimeoutMs: int(def / time.Millisecond),
		MaxCommandTimeoutMs:     int(cfg.MaxCommandTimeout / time.Millisecond),
	}}
	if len(cfg.ToolOutputLimits)+len(cfg.ToolLineLimits) > 0 {
		opts.Limits = map[string]tools.Limits{}
		for name, n := range cfg.ToolOutputLimits {
			l := opts.Limits[name]
			l.MaxChars = n
			opts.Limits[name] = l
		}
		for name, n := range cfg.ToolLineLimits {
			l := opts.Limits[name]
			l.MaxLines = n
			opts.Limits[name] = l
		}
	}
	return opts
}
