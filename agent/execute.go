package agent

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/tools"
)

// executeTools runs one round of calls through the registry pipeline and
// returns the results in call order. When the profile allows parallel
// calls, each run of consecutive read-only calls runs concurrently, and
// each mutating call runs alone, after everything before it and before
// everything after it; otherwise every call runs in order. When a call
// asks to park (ErrParked), the calls after its batch are not run and the
// results so far (its batch's other calls included) are returned with
// ErrParked.
func (s *Session) executeTools(ctx context.Context, calls []llm.ToolCall, round int) ([]llm.ToolResult, error) {
	opts := s.execOptions()
	results := make([]llm.ToolResult, 0, len(calls))
	for _, batch := range s.batches(calls) {
		out, parked := s.executeBatch(ctx, batch, round, opts)
		results = append(results, out...)
		if parked {
			return results, ErrParked
		}
	}
	return results, nil
}

// executeBatch runs calls concurrently (one call: in this goroutine) and
// returns the results of those that did not park, in call order, and
// whether any parked.
func (s *Session) executeBatch(ctx context.Context, calls []llm.ToolCall, round int, opts tools.ExecOptions) ([]llm.ToolResult, bool) {
	results := make([]llm.ToolResult, len(calls))
	parked := make([]bool, len(calls))
	if len(calls) == 1 {
		results[0], parked[0] = s.executeOne(ctx, calls[0], round, opts)
	} else {
		var wg sync.WaitGroup
		for i, c := range calls {
			wg.Go(func() { results[i], parked[i] = s.executeOne(ctx, c, round, opts) })
		}
		wg.Wait()
	}
	if !slices.Contains(parked, true) {
		return results, false
	}
	kept := results[:0]
	for i, r := range results {
		if !parked[i] {
			kept = append(kept, r)
		}
	}
	return kept, true
}

// batches splits a round into what may run together: runs of consecutive
// read-only calls, and each mutating call alone. Without parallel calls in
// the profile every call is its own batch. A call to an unknown tool is
// read-only: it only gets an error.
func (s *Session) batches(calls []llm.ToolCall) [][]llm.ToolCall {
	var out [][]llm.ToolCall
	parallel := s.profile.SupportsParallelToolCalls()
	prevShared := false // the last batch is a run of read-only calls
	for _, c := range calls {
		t, ok := s.registry.Get(c.Name)
		shared := parallel && !(ok && t.Mutates)
		if shared && prevShared {
			out[len(out)-1] = append(out[len(out)-1], c)
			continue
		}
		out = append(out, []llm.ToolCall{c})
		prevShared = shared
	}
	return out
}

// executeOne runs one call, emitting TOOL_CALL_START, output deltas and
// TOOL_CALL_END with the full output. parked is true when the call asked to
// park the session; its result is then not to be recorded.
func (s *Session) executeOne(ctx context.Context, call llm.ToolCall, round int, opts tools.ExecOptions) (llm.ToolResult, bool) {
	s.emit(Event{Kind: EventToolCallStart, ToolName: call.Name, CallID: call.ID, Arguments: call.Arguments, Round: round})
	if call.ID != "" && call.ID == s.cut.id {
		res := cutResult(call, s.cut.tokens)
		s.emit(Event{Kind: EventToolCallEnd, ToolName: call.Name, CallID: call.ID, Output: res.Content, IsError: true, Round: round})
		return res, false
	}
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
		res = s.postToolHooks(ctx, call, s.executeTraced(ctx, call, opts))
	}
	flush()
	res = s.redactResult(res)
	if _, parked := s.parkIDs.LoadAndDelete(call.ID); parked {
		return llm.ToolResult{}, true
	}
	if res.Truncated {
		s.keepFull(call.ID, res.Full)
		res.Content += truncatedNote(call.ID)
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
