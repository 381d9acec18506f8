package sim

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/agentfleet/agentfleet/llm"
)

// windowRule is a context window for the models whose name starts with prefix.
type windowRule struct {
	prefix string
	tokens int
}

// Responder answers a request before the script does: it returns the
// reply and true, or false to leave the request to the script. It runs
// with the server's lock held, so it must not call the Server.
type Responder func(req RecordedRequest) (Reply, bool)

// SetResponder installs f (nil removes it).
func (s *Server) SetResponder(f Responder) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.responder = f
}

// SetContextWindow gives the models whose name starts with modelPrefix
// ("" matches every model) a context window of tokens: the server counts
// every request to them (CountTokens), answers one over the window with
// the provider's real context-length error naming both sizes where the
// provider does, without taking a scripted reply, and reports the count
// as the input tokens of replies that leave them 0. The longest matching
// prefix wins; tokens <= 0 removes the rule.
func (s *Server) SetContextWindow(modelPrefix string, tokens int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rules := s.windows[:0:0]
	for _, r := range s.windows {
		if r.prefix != modelPrefix {
			rules = append(rules, r)
		}
	}
	if tokens > 0 {
		rules = append(rules, windowRule{prefix: modelPrefix, tokens: tokens})
	}
	s.windows = rules
}

// CountTokens is the simulated tokenizer: a token per four bytes of the
// request body, structure and tool definitions included, as a provider
// counts the whole prompt.
func CountTokens(body []byte) int { return (len(body) + 3) / 4 }

// measure returns the request's size and its model's window (0, 0 when no
// window applies).
func (s *Server) measure(r *http.Request, body []byte, d Dialect) (tokens, window int) {
	if d == nil {
		return 0, 0
	}
	s.mu.Lock()
	rules := s.windows
	s.mu.Unlock()
	if len(rules) == 0 {
		return 0, 0
	}
	model, _ := d.Head(r, body)
	best := -1
	for _, rule := range rules {
		if strings.HasPrefix(model, rule.prefix) && len(rule.prefix) > best {
			best, window = len(rule.prefix), rule.tokens
		}
	}
	if best < 0 {
		return 0, 0
	}
	return CountTokens(body), window
}

// contextMessages are the providers' context-length messages with the
// sizes filled in; OpenAI's Responses API names none.
var contextMessages = map[string]func(tokens, window int) string{
	"anthropic": func(t, w int) string { return fmt.Sprintf("prompt is too long: %d tokens > %d maximum", t, w) },
	"gemini": func(t, w int) string {
		return fmt.Sprintf("The input token count (%d) exceeds the maximum number of tokens allowed (%d).", t, w)
	},
	"chatcompat": func(t, w int) string {
		return fmt.Sprintf("This model's maximum context length is %d tokens. However, your messages resulted in %d tokens. "+
			"Please reduce the length of the messages.", w, t)
	},
}

// overflow is the failure answering a request of tokens over window.
func overflow(d Dialect, tokens, window int) Failure {
	f := Failure{Kind: llm.ErrContextLength}
	if msg, ok := contextMessages[d.Name()]; ok {
		f.Message = msg(tokens, window)
	}
	return f
}
