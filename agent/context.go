package agent

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentfleet/agentfleet/agent/compact"
	"github.com/agentfleet/agentfleet/internal/tracing"
	"github.com/agentfleet/agentfleet/llm"
)

// ContextInfo describes the context window at CONTEXT_ESTIMATE,
// COMPACTION_START and COMPACTION_END.
type ContextInfo struct {
	// EstimateTokens is the estimated size of the request about to be sent.
	EstimateTokens int `json:"estimate_tokens,omitempty"`
	Window         int `json:"window"`
	Threshold      int `json:"threshold"`
	// Reason, Strategies, TokensBefore and TokensAfter describe a compaction.
	Reason       string   `json:"reason,omitempty"`
	Strategies   []string `json:"strategies,omitempty"`
	TokensBefore int      `json:"tokens_before,omitempty"`
	TokensAfter  int      `json:"tokens_after,omitempty"`
	// Turn is the index of the compaction turn (COMPACTION_END, when one was recorded).
	Turn int `json:"turn,omitempty"`
	// Error says why a summary could not be written or why nothing fits.
	Error string `json:"error,omitempty"`
}

// WindowError refuses a session whose system prompt and tools alone do not
// fit the model's window.
type WindowError struct {
	FixedTokens, Window int
}

func (e *WindowError) Error() string {
	return fmt.Sprintf("agent: the system prompt and tool definitions need about %d tokens but the context window is %d tokens: "+
		"raise the window (context.window) or use a model with a larger one", e.FixedTokens, e.Window)
}

// outputLimitNote asks the model to go on with an answer the output-token
// limit cut off.
const outputLimitNote = "Your previous answer was cut off by the output token limit. " +
	"Continue exactly where it stopped, without repeating what you already wrote."

// pausedNote asks the model to go on with a turn its provider paused
// (llm.FinishPaused: a long run of server tools such as web search).
const pausedNote = "Go on with your previous answer where it paused."

// maxContinuations bounds the continuation requests for one answer.
const maxContinuations = 3

// windowState is the session's context accounting. The loop owner alone
// uses it, except requested, which host methods set.
type windowState struct {
	cfg       compact.Config
	est       compact.Estimator
	view      compact.View
	turns     []compact.Turn // per recorded turn, as the planner sees it
	lastChars int            // characters of the last request sent
	fixed     int            // characters of its system prompt and tools
	cont      int            // continuations of the current answer
	cutText   string         // text of the cut answers being continued
	learned   int            // the window a provider's context-length error named, when smaller
	requested bool           // the host asked for a compaction (guarded by s.mu)
	flushed   bool           // the memory flush of this compaction cycle ran
	flushing  bool           // the model is in the memory flush's silent turn
	readTool  bool           // read_tool_output is registered
}

// restoreWindow rebuilds the compacted view and the estimator's
// calibration from recorded turns, so a resumed session sends what the
// session it replaces would have sent.
func (s *Session) restoreWindow() {
	s.cw.cfg = s.cfg.Session.Context
	calibrated := -1
	for i, t := range s.history {
		switch {
		case t.Kind == TurnCompaction && t.Compaction != nil:
			s.cw.view, s.cw.learned = t.Compaction.View, t.Compaction.LearnedWindow
			s.registerReadToolOutput()
		case t.Kind == TurnAssistant && t.RequestChars > 0 && t.Usage.InputTokens > 0:
			calibrated = i
		case len(t.FullOutputs) > 0:
			s.registerReadToolOutput()
		}
	}
	if calibrated >= 0 {
		t := s.history[calibrated]
		s.cw.est.Observe(t.RequestChars, t.Usage.InputTokens)
		for _, later := range s.history[calibrated+1:] {
			if later.Kind == TurnCompaction {
				s.cw.est.Reset()
			}
		}
	}
	if s.cw.view != (compact.View{}) {
		s.msgs, s.converted = viewMessages(s.history, s.cw.view), len(s.history)
	}
	s.restoreFlush()
}

// restoreFlush finds whether the recorded turns end inside a memory
// flush's silent turn, or after one that no compaction followed.
func (s *Session) restoreFlush() {
	for _, t := range s.history {
		switch {
		case t.Kind == TurnCompaction:
			s.cw.flushed, s.cw.flushing = false, false
		case t.Kind == TurnSteering && t.Source == "memory_flush":
			s.cw.flushed = true
			s.cw.flushing = t.Text != memoryDoneNote
		}
	}
}

// budget is the token arithmetic of the session's window: the configured
// one, else the profile's, lowered to what a provider's error named.
func (s *Session) budget() compact.Budget {
	w := s.profile.ContextWindow()
	if s.cw.cfg.Window > 0 {
		w = s.cw.cfg.Window
	}
	if s.cw.learned > 0 && (w <= 0 || s.cw.learned < w) {
		w = s.cw.learned
	}
	cfg := s.cw.cfg
	cfg.Window = 0
	return cfg.BudgetFor(w)
}

// planTurns returns the planner's view of every recorded turn, computing
// only the turns added since the last call.
func (s *Session) planTurns() []compact.Turn {
	h := s.view()
	for _, t := range h[len(s.cw.turns):] {
		s.cw.turns = append(s.cw.turns, planTurn(t))
	}
	return s.cw.turns
}

func planTurn(t Turn) compact.Turn {
	msgs := appendMessages(nil, []Turn{t})
	pt := compact.Turn{Kind: compact.KindUser}
	switch t.Kind {
	case TurnAssistant:
		pt.Kind = compact.KindAssistant
	case TurnToolResults:
		pt.Kind = compact.KindResults
	case TurnCompaction:
		pt.Kind = compact.KindOther
	}
	for _, m := range msgs {
		pt.Chars += compact.MessageChars(m)
	}
	pt.Stubbed = pt.Chars
	if t.Kind == TurnToolResults {
		pt.Stubbed = compact.MessageChars(appendMessages(nil, []Turn{stubbed(t)})[0])
	}
	return pt
}

// stubbed returns a tool-result turn whose bodies are stubs.
func stubbed(t Turn) Turn {
	rs := make([]llm.ToolResult, len(t.Results))
	for i, r := range t.Results {
		rs[i] = llm.ToolResult{ToolCallID: r.ToolCallID, Name: r.Name, IsError: r.IsError,
			Content: compact.Stub(r.Name, r.ToolCallID, len(r.Content))}
	}
	t.Results = rs
	return t
}

// viewMessages converts the turns of a compacted view to the conversation
// sent to the model: the preamble (with the summary), then every turn from
// the view's start, old tool results as stubs.
func viewMessages(history []Turn, v compact.View) []llm.Message {
	var msgs []llm.Message
	if p := v.Preamble(); p != "" {
		msgs = append(msgs, llm.UserMessage(p))
	}
	for i := v.Start; i < len(history); i++ {
		t := history[i]
		if i < v.PruneBefore && t.Kind == TurnToolResults {
			t = stubbed(t)
		}
		msgs = appendMessages(msgs, []Turn{t})
	}
	return msgs
}

// prepareRequest builds the next request and keeps it inside the window:
// it estimates the request, warns above 80% of the window, and compacts
// when the estimate passes the threshold or the host asked.
func (s *Session) prepareRequest(ctx context.Context) (llm.Request, error) {
	req, err := s.buildRequest(ctx)
	if err != nil {
		return req, err
	}
	b := s.budget()
	s.cw.fixed = compact.MessageChars(req.Messages[0]) + compact.ToolChars(req.Tools)
	if fixed := s.cw.est.Tokens(s.cw.fixed); fixed > b.Hard && b.Window > 0 && !s.cw.cfg.Disabled {
		return req, &WindowError{FixedTokens: fixed, Window: b.Window}
	}
	est := s.estimate()
	s.warnContext(est, b.Window)
	s.mu.Lock()
	requested := s.cw.requested
	s.cw.requested = false
	s.mu.Unlock()
	reason := ""
	switch {
	case requested:
		reason = compact.ReasonRequested
	case !s.cw.cfg.Disabled && b.Window > 0 && est > b.Threshold && !s.cw.flushing:
		reason = compact.ReasonThreshold // after the memory flush's silent turn, if one runs
	}
	if reason == compact.ReasonThreshold {
		if started, err := s.startMemoryFlush(ctx); started || err != nil {
			if err != nil {
				return req, err
			}
			reason = "" // compact at the next request, after the notes
			if req, err = s.buildRequest(ctx); err != nil {
				return req, err
			}
			est = s.estimate()
		}
	}
	if reason != "" {
		if err := s.compact(ctx, reason); err != nil {
			return req, err
		}
		if req, err = s.buildRequest(ctx); err != nil {
			return req, err
		}
		est = s.estimate()
	}
	s.cw.lastChars = s.cw.fixed + s.cw.view.Size(s.planTurns())
	s.emit(Event{Kind: EventContextEstimate, Context: &ContextInfo{EstimateTokens: est, Window: b.Window, Threshold: b.Threshold}})
	return req, nil
}

// estimate is the estimated size of the next request in tokens.
func (s *Session) estimate() int {
	return s.cw.est.Estimate(s.cw.fixed + s.cw.view.Size(s.planTurns()))
}

// warnContext emits WARNING ("Context usage at ~N% of context window"),
// once per input, when the estimate passes 80% of the window.
func (s *Session) warnContext(tokens, window int) {
	if window <= 0 || !contextOver(tokens, window) {
		return
	}
	s.mu.Lock()
	fire := !s.warned
	s.warned = true
	s.mu.Unlock()
	if fire {
		pct := tokens * 100 / window
		s.emit(Event{Kind: EventWarning, ContextPercent: pct, Text: fmt.Sprintf("Context usage at ~%d%% of context window", pct)})
	}
}

// compact runs the strategies of package compact and records the new view
// as a compaction turn. The transcript before it is not changed.
func (s *Session) compact(ctx context.Context, reason string) (err error) {
	ctx, span := startCompactionSpan(ctx, reason)
	defer func() { tracing.Fail(span, err); span.End() }()
	b := s.budget()
	turns := s.planTurns()
	before := s.estimate()
	s.emit(Event{Kind: EventCompactionStart, Context: &ContextInfo{Reason: reason, EstimateTokens: before, Window: b.Window, Threshold: b.Threshold}})
	var usage llm.Usage // of the summary calls, charged to the compaction turn
	view := s.cw.view
	if mem := s.readMemory(ctx); mem != "" {
		view.Memory = mem
	}
	rec, err := compact.Run(ctx, compact.Params{
		Turns: turns, View: view, Fixed: s.cw.fixed, Budget: b,
		KeepRecent: s.cw.cfg.KeepRecentRounds, Tokens: s.cw.est.Tokens, Reason: reason,
		Summarize: s.summarizer(b, &usage),
	})
	if reason == compact.ReasonContextLength {
		rec.TokensBefore = before
	}
	rec.LearnedWindow = s.cw.learned
	info := &ContextInfo{Reason: reason, Strategies: rec.Strategies, TokensBefore: rec.TokensBefore,
		TokensAfter: rec.TokensAfter, Window: b.Window, Threshold: b.Threshold, Error: rec.SummaryError}
	if err != nil {
		info.Error = err.Error()
	}
	if rec.Changed(s.cw.view) {
		r := rec
		if aerr := s.appendTurn(ctx, Turn{Kind: TurnCompaction, Compaction: &r, Usage: usage}); aerr != nil {
			return aerr
		}
		info.Turn = len(s.view()) - 1
		s.cw.view = rec.View
		s.cw.est.Reset()
		s.cw.flushed = false // the next cycle may flush again
		s.registerReadToolOutput()
		s.mu.Lock()
		s.msgs, s.converted = viewMessages(s.history, s.cw.view), len(s.history)
		s.mu.Unlock()
	}
	s.emit(Event{Kind: EventCompactionEnd, Context: info})
	return err
}

// summarizer returns the summary strategy: the summary model (or the
// session's) writes notes on the turns, in the form the view sends them.
func (s *Session) summarizer(b compact.Budget, usage *llm.Usage) compact.Summarizer {
	return func(ctx context.Context, prev string, from, to int) (string, error) {
		h := s.view()
		part := viewMessages(h[:to], compact.View{Start: from, PruneBefore: s.cw.view.PruneBefore})
		maxOut := max(min(4000, b.Window/10), 256)
		room := max(b.Window-maxOut-b.Window/8, b.Window/4)
		maxChars := int(float64(room*compact.CharsPerToken) / s.cw.est.Ratio())
		req := compact.SummaryRequest(s.summaryModel(), prev, part, maxChars, maxOut)
		resp, err := s.client.Complete(ctx, req)
		if err != nil {
			return "", err
		}
		*usage = usage.Add(resp.Usage)
		return resp.Text(), nil
	}
}

// summaryModel is the model that writes summaries: the configured one,
// else the profile's (a profile may name a cheaper model), else the
// session's.
func (s *Session) summaryModel() string {
	if m := s.cw.cfg.SummaryModel; m != "" {
		return m
	}
	if p, ok := s.profile.(interface{ SummaryModel() string }); ok && p.SummaryModel() != "" {
		return p.SummaryModel()
	}
	return s.Model()
}

// callFitting calls the model; when the provider refuses the request as
// too long although the estimate said it fits, it warns, recalibrates,
// compacts and retries once.
func (s *Session) callFitting(ctx context.Context, req llm.Request) (*llm.Response, error) {
	if s.cw.flushing {
		resp, err := s.silentCall(ctx, req)
		if llm.KindOf(err) != llm.ErrContextLength {
			s.observe(resp)
			return resp, err
		}
		s.cw.flushing = false // no room for the notes: compact without them
	}
	resp, err := s.callModel(ctx, req)
	if llm.KindOf(err) == llm.ErrContextLength && s.cw.cfg.Disabled {
		s.warnOverflow(s.budget())
		return nil, &overflowWarned{err: err}
	}
	if llm.KindOf(err) != llm.ErrContextLength {
		s.observe(resp)
		return resp, err
	}
	tokens, window := compact.SizesInError(err.Error())
	s.cw.est.Overflowed(s.cw.lastChars, tokens)
	if window > 0 {
		s.cw.learned = window
	}
	b := s.budget()
	s.warnOverflow(b)
	if cerr := s.compact(ctx, compact.ReasonContextLength); cerr != nil {
		return nil, cerr
	}
	if req, err = s.prepareRequest(ctx); err != nil {
		return nil, err
	}
	resp, err = s.callModel(ctx, req)
	if llm.KindOf(err) == llm.ErrContextLength {
		return nil, fmt.Errorf("agent: the provider still refuses the request as too long after compaction "+
			"(estimated %d tokens, window %d): %w", s.estimate(), b.Window, err)
	}
	s.observe(resp)
	return resp, err
}

// warnOverflow emits the context WARNING for a context overflow the
// estimate missed (not once per input: each overflow is worth seeing).
func (s *Session) warnOverflow(b compact.Budget) {
	tokens := s.cw.est.Estimate(s.cw.lastChars)
	pct := 100
	if b.Window > 0 {
		pct = max(tokens*100/b.Window, 100)
	}
	s.emit(Event{Kind: EventWarning, ContextPercent: pct, Text: fmt.Sprintf("Context usage at ~%d%% of context window", pct)})
}

// overflowWarned is a context-length error with compaction off
// (Context.Disabled): WARNING was emitted, the input ends with the error
// and the session stays usable, as the spec has it (warn only).
type overflowWarned struct{ err error } //nolint:errname // a marker of what was done, not an error kind callers match

func (e *overflowWarned) Error() string { return e.err.Error() }
func (e *overflowWarned) Unwrap() error { return e.err }

// observe calibrates the estimator on a response's reported usage.
func (s *Session) observe(resp *llm.Response) {
	if resp != nil {
		s.cw.est.Observe(s.cw.lastChars, resp.Usage.InputTokens)
	}
}

// continueCut asks the model to go on when its answer was cut by the
// output-token limit, or paused by its provider (llm.FinishPaused), up to
// maxContinuations times per answer. It reports whether a continuation
// was queued; out.Text then collects the pieces.
func (s *Session) continueCut(ctx context.Context, resp *llm.Response, out *Outcome) (bool, error) {
	note, source := outputLimitNote, "output_limit"
	if resp.FinishReason.Reason == llm.FinishPaused {
		note, source = pausedNote, "pause_turn"
	}
	if (resp.FinishReason.Reason != llm.FinishLength && resp.FinishReason.Reason != llm.FinishPaused) || s.cw.cont >= maxContinuations {
		out.Text = s.cw.cutText + out.Text
		s.cw.cont, s.cw.cutText = 0, ""
		return false, nil
	}
	s.cw.cont++
	s.cw.cutText += resp.Text()
	if err := s.appendTurn(ctx, Turn{Kind: TurnSteering, Text: note, Source: source}); err != nil {
		return false, err
	}
	return true, nil
}

// Compact asks for a compaction of the session's context. An idle session
// compacts at once (Compact returns when it is recorded); a busy one
// compacts before its next model call and Compact returns at once.
func (s *Session) Compact(ctx context.Context) error {
	if s.isClosing() {
		return ErrClosed
	}
	select {
	case s.run <- struct{}{}:
	default:
		s.mu.Lock()
		s.cw.requested = true
		s.mu.Unlock()
		return nil
	}
	defer func() { <-s.run }()
	if s.isClosing() {
		return ErrClosed
	}
	if _, err := s.prepareCompact(ctx); err != nil {
		return err
	}
	return s.compact(ctx, compact.ReasonRequested)
}

// RequestCompaction asks for a compaction before the session's next model
// call, without waiting for it (Compact waits when the session is idle).
func (s *Session) RequestCompaction() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cw.requested = true
}

// prepareCompact computes the fixed part of the next request for a
// compaction outside the loop.
func (s *Session) prepareCompact(ctx context.Context) (llm.Request, error) {
	req, err := s.buildRequest(ctx)
	if err != nil {
		return req, err
	}
	s.cw.fixed = compact.MessageChars(req.Messages[0]) + compact.ToolChars(req.Tools)
	return req, nil
}

// contextError reports the context errors that end the session.
func contextError(err error) bool {
	var we *WindowError
	var tl *compact.TooLargeError
	return errors.As(err, &we) || errors.As(err, &tl)
}

// withoutTrailingCompactions drops the compaction turns at the end of h: a
// compaction asked for while idle follows a finished answer, so it does
// not make the input unfinished.
func withoutTrailingCompactions(h []Turn) []Turn {
	for len(h) > 0 && h[len(h)-1].Kind == TurnCompaction {
		h = h[:len(h)-1]
	}
	return h
}
