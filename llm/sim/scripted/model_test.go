package scripted_test

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/llm/anthropic"
	"github.com/agentfleet/agentfleet/llm/sim/scripted"
)

// Two conversations with the same script but different titles are counted
// apart, and asking for a step again counts as a repeat.
func TestRequestsAreCountedPerConversation(t *testing.T) {
	m := scripted.New()
	srv := httptest.NewServer(m)
	defer srv.Close()
	steps := []scripted.Step{{Text: "first answer"}}
	a, b := scripted.Prompt("task a", steps...), scripted.Prompt("task b", steps...)
	for _, prompt := range []string{a, a, b} {
		if got := ask(t, srv.URL, prompt); got != "first answer" {
			t.Fatalf("answer %q, want the script's first step", got)
		}
	}
	if m.Requests(a, 0) != 2 || m.Requests(b, 0) != 1 {
		t.Fatalf("requests: a %d, b %d; want 2 and 1", m.Requests(a, 0), m.Requests(b, 0))
	}
	if m.Total() != 3 || m.Repeats() != 1 {
		t.Fatalf("total %d, repeats %d; want 3 and 1", m.Total(), m.Repeats())
	}
	if len(scripted.Steps(a)) != 1 || scripted.Steps("no script") != nil {
		t.Fatal("Steps did not read the script back")
	}
}

func ask(t *testing.T, url, prompt string) string {
	t.Helper()
	c, err := anthropic.New(anthropic.Config{APIKey: "k", BaseURL: url})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Complete(context.Background(), llm.Request{Model: "m", Messages: []llm.Message{llm.UserMessage(prompt)}})
	if err != nil {
		t.Fatal(err)
	}
	return resp.Text()
}
