package fallback_test

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"

	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/llm/anthropic"
	"github.com/agentfleet/agentfleet/llm/fallback"
	"github.com/agentfleet/agentfleet/llm/llmtest"
	"github.com/agentfleet/agentfleet/llm/sim"
)

func modelOf(t *testing.T, r sim.RecordedRequest) string {
	t.Helper()
	var b struct {
		Model string `json:"model"`
	}
	if err := json.Unmarshal(r.Body, &b); err != nil {
		t.Fatal(err)
	}
	return b.Model
}

// TestFallbackAfterOverload: three overloaded answers (the adapter's own
// retries) send the request to the fallback model, whose name the answer
// carries; during the cooldown the next request goes there directly, in
// both Complete and Stream.
func TestFallbackAfterOverload(t *testing.T) {
	for _, stream := range []bool{false, true} {
		srv := sim.NewServer()
		retry, _ := llmtest.FastRetry(3)
		inner, err := anthropic.New(anthropic.Config{BaseURL: srv.URL(), APIKey: "k", Retry: retry})
		if err != nil {
			t.Fatal(err)
		}
		var switches atomic.Int32
		c := &fallback.Client{Inner: inner, Fallback: "claude-haiku-4-5", OnFallback: func(_ context.Context, from, to string, cause error) {
			if from != "claude-opus-4-1" || to != "claude-haiku-4-5" {
				t.Errorf("OnFallback(%s, %s)", from, to)
			}
			switches.Add(1)
		}}
		over := sim.Reply{Failure: &sim.Failure{Kind: llm.ErrOverloaded}}
		srv.Enqueue(over, over, over, sim.Text("from the fallback"), sim.Text("again"))
		req := llm.Request{Model: "claude-opus-4-1", Messages: []llm.Message{llm.UserMessage("hi")}}
		get := func() *llm.Response {
			if !stream {
				resp, err := c.Complete(context.Background(), req)
				if err != nil {
					t.Fatal(err)
				}
				return resp
			}
			_, resp, err := llmtest.Collect(c.Stream(context.Background(), req))
			if err != nil {
				t.Fatal(err)
			}
			return resp
		}
		if resp := get(); resp.Text() != "from the fallback" || resp.Model != "claude-haiku-4-5" {
			t.Fatalf("stream %v: answer %q from %q, want the fallback's", stream, resp.Text(), resp.Model)
		}
		if resp := get(); resp.Text() != "again" || resp.Model != "claude-haiku-4-5" {
			t.Fatalf("stream %v: during the cooldown: %q from %q", stream, resp.Text(), resp.Model)
		}
		reqs := srv.Requests()
		var models []string
		for _, r := range reqs {
			models = append(models, modelOf(t, r))
		}
		want := []string{"claude-opus-4-1", "claude-opus-4-1", "claude-opus-4-1", "claude-haiku-4-5", "claude-haiku-4-5"}
		if len(models) != len(want) {
			t.Fatalf("stream %v: requests went to %v, want %v", stream, models, want)
		}
		for i := range want {
			if models[i] != want[i] {
				t.Fatalf("stream %v: requests went to %v, want %v", stream, models, want)
			}
		}
		if switches.Load() != 2 {
			t.Errorf("stream %v: %d fallbacks reported, want 2", stream, switches.Load())
		}
		srv.Close()
	}
}

// TestNoFallbackForOtherErrors: a rate limit or a bad request is not an
// overload: it is returned as it is.
func TestNoFallbackForOtherErrors(t *testing.T) {
	srv := sim.NewServer()
	defer srv.Close()
	inner, err := anthropic.New(anthropic.Config{BaseURL: srv.URL(), APIKey: "k", Retry: llm.RetryPolicy{MaxAttempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	c := &fallback.Client{Inner: inner, Fallback: "claude-haiku-4-5"}
	srv.Enqueue(sim.Reply{Failure: &sim.Failure{Kind: llm.ErrInvalidRequest}})
	_, err = c.Complete(context.Background(), llm.Request{Model: "claude-opus-4-1", Messages: []llm.Message{llm.UserMessage("hi")}})
	if llm.KindOf(err) != llm.ErrInvalidRequest || len(srv.Requests()) != 1 {
		t.Fatalf("err %v after %d requests, want the invalid request once", err, len(srv.Requests()))
	}
}

// TestFallbackKeepsWithinItsOutputLimit: a request asking for more output
// than the fallback model allows is sent to it with the fallback's maximum.
func TestFallbackKeepsWithinItsOutputLimit(t *testing.T) {
	srv := sim.NewServer()
	defer srv.Close()
	retry, _ := llmtest.FastRetry(1)
	inner, err := anthropic.New(anthropic.Config{BaseURL: srv.URL(), APIKey: "k", Retry: retry})
	if err != nil {
		t.Fatal(err)
	}
	c := &fallback.Client{Inner: inner, Fallback: "claude-3-5-haiku"}
	srv.Enqueue(sim.Reply{Failure: &sim.Failure{Kind: llm.ErrOverloaded}}, sim.Text("from the fallback"))
	req := llm.Request{Model: "claude-sonnet-4-5", MaxOutputTokens: 64_000, Messages: []llm.Message{llm.UserMessage("hi")}}
	if _, err := c.Complete(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	var b struct {
		MaxTokens int `json:"max_tokens"`
	}
	if err := json.Unmarshal(reqs[len(reqs)-1].Body, &b); err != nil {
		t.Fatal(err)
	}
	if b.MaxTokens != 8_192 {
		t.Fatalf("the fallback got max_tokens %d, want its maximum 8192", b.MaxTokens)
	}
}
