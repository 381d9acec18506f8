package agent

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentfleet/agentfleet/llm"
)

// buildRequest assembles the next model request from the profile, the
// session's current model and effort, and the history.
func (s *Session) buildRequest(ctx context.Context) (llm.Request, error) {
	if err := s.systemPrompt(ctx); err != nil {
		return llm.Request{}, err
	}
	s.mu.Lock()
	model, effort := s.model, s.effort
	prompt := s.prompts[model]
	s.msgs = appendMessages(s.msgs, s.history[s.converted:])
	s.converted = len(s.history)
	msgs := make([]llm.Message, 0, len(s.msgs)+1)
	msgs = append(msgs, llm.SystemMessage(prompt))
	msgs = append(msgs, s.msgs...)
	s.mu.Unlock()
	return llm.Request{
		Model:           model,
		Messages:        msgs,
		Tools:           s.registry.Definitions(),
		ToolChoice:      llm.ToolChoice{Mode: llm.ToolChoiceAuto},
		ReasoningEffort: effort,
		MaxOutputTokens: s.outputLimit(model),
		ProviderOptions: s.profile.ProviderOptions(effort),
		CacheKey:        s.id,
	}, nil
}

// systemPrompt builds (once per model) the layered system prompt.
func (s *Session) systemPrompt(ctx context.Context) error {
	s.mu.Lock()
	model := s.model
	_, ok := s.prompts[model]
	s.mu.Unlock()
	if ok {
		return nil
	}
	p, err := s.buildSystemPrompt(ctx, model)
	if err != nil {
		return fmt.Errorf("agent: build system prompt: %w", err)
	}
	p = s.withResultSchema(p)
	s.mu.Lock()
	s.prompts[model] = p
	s.mu.Unlock()
	return nil
}

// callModel sends req, streaming text events as tokens arrive when the
// profile streams, and returns the whole response.
func (s *Session) callModel(ctx context.Context, req llm.Request) (resp *llm.Response, err error) {
	ctx, span := s.startModelSpan(ctx, req)
	defer func() { s.endModelSpan(span, req.Model, resp, err) }()
	started := false
	if s.profile.SupportsStreaming() {
		resp, err = s.stream(ctx, req, &started)
	} else {
		resp, err = s.client.Complete(ctx, req)
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		return nil, err
	}
	if !started {
		s.emit(Event{Kind: EventAssistantTextStart})
	}
	s.emit(Event{Kind: EventAssistantTextEnd, Text: resp.Text(), Reasoning: resp.Reasoning(), Usage: &resp.Usage})
	return resp, nil
}

var errNoFinish = errors.New("agent: the model stream ended without a final response")

// stream consumes Client.Stream, emitting ASSISTANT_TEXT_START and DELTA.
func (s *Session) stream(ctx context.Context, req llm.Request, started *bool) (*llm.Response, error) {
	var resp *llm.Response
	for ev, err := range s.client.Stream(ctx, req) {
		if err != nil {
			return nil, err
		}
		switch ev.Kind {
		case llm.EventTextDelta:
			if !*started {
				*started = true
				s.emit(Event{Kind: EventAssistantTextStart})
			}
			s.emit(Event{Kind: EventAssistantTextDelta, Text: ev.Delta})
		case llm.EventFinish:
			resp = ev.Response
		}
	}
	if resp == nil {
		return nil, &llm.Error{Kind: llm.ErrStreamInterrupted, Provider: s.profile.ID(), Err: errNoFinish}
	}
	return resp, nil
}
