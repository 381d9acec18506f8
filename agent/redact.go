package agent

import (
	"cmp"
	"maps"
	"slices"
	"strings"

	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/tools"
)

// MinSecretLen is the shortest value a Redactor replaces: shorter ones
// ("true", a port number) would mangle ordinary output far more often
// than they would hide a secret.
const MinSecretLen = 8

// Redactor replaces known secret values with "[redacted:NAME]". It is
// built once from name→value pairs and is safe for concurrent use.
//
// It matches values exactly, as bytes; a value printed in another
// encoding (base64, URL-escaped) is not recognized. A nil *Redactor
// redacts nothing.
type Redactor struct {
	repl    *strings.Replacer
	values  []string // longest first
	longest int
}

// NewRedactor builds a Redactor of secrets (name → value). Values shorter
// than MinSecretLen are left out; a value known under several names is
// reported under the first of them in sorted order. It returns nil when
// no value is left.
func NewRedactor(secrets map[string]string) *Redactor {
	byValue := map[string]string{}
	for _, name := range slices.Sorted(maps.Keys(secrets)) {
		v := secrets[name]
		if _, dup := byValue[v]; len(v) >= MinSecretLen && !dup {
			byValue[v] = name
		}
	}
	if len(byValue) == 0 {
		return nil
	}
	r := &Redactor{values: slices.Collect(maps.Keys(byValue))}
	// Longest first, so a secret containing another is replaced whole.
	slices.SortFunc(r.values, func(a, b string) int { return cmp.Or(len(b)-len(a), strings.Compare(a, b)) })
	pairs := make([]string, 0, 2*len(r.values))
	for _, v := range r.values {
		pairs = append(pairs, v, "[redacted:"+byValue[v]+"]")
	}
	r.repl, r.longest = strings.NewReplacer(pairs...), len(r.values[0])
	return r
}

// Redact returns s with every known secret value replaced.
func (r *Redactor) Redact(s string) string {
	if r == nil || s == "" {
		return s
	}
	return r.repl.Replace(s)
}

// heldBack is the length of the longest suffix of s that is the start
// of a secret (shorter than it): a secret that a later chunk of output
// may complete.
func (r *Redactor) heldBack(s string) int {
	for k := min(len(s), r.longest-1); k > 0; k-- {
		tail := s[len(s)-k:]
		for _, v := range r.values {
			if len(v) > k && strings.HasPrefix(v, tail) {
				return k
			}
		}
	}
	return 0
}

// Stream wraps emit, a consumer of output chunks, so that it sees the
// chunks redacted, a secret split across two chunks included: the end of
// a chunk that may begin a secret is held back until the next chunk (or
// flush) says. Call flush once, after the last chunk; chunks come one at
// a time.
func (r *Redactor) Stream(emit func(string)) (write func(string), flush func()) {
	if r == nil {
		return emit, func() {}
	}
	var pending string
	write = func(chunk string) {
		out := r.Redact(pending + chunk)
		k := r.heldBack(out)
		pending = out[len(out)-k:]
		if head := out[:len(out)-k]; head != "" {
			emit(head)
		}
	}
	flush = func() {
		if pending != "" {
			emit(r.Redact(pending))
			pending = ""
		}
	}
	return write, flush
}

// redactOutput returns the OnOutput callback of one call's output deltas,
// redacted by Config.Redactor, and the flush to call once the call
// returned (see Redactor.Stream).
func (s *Session) redactOutput(call llm.ToolCall) (onOutput func(string), flush func()) {
	return s.cfg.Redactor.Stream(func(chunk string) {
		s.emit(Event{Kind: EventToolCallOutput, ToolName: call.Name, CallID: call.ID, Output: chunk})
	})
}

// redactResult redacts a tool's result before it is recorded (the
// turn), emitted (TOOL_CALL_END) or sent to the model.
func (s *Session) redactResult(res tools.Result) tools.Result {
	r := s.cfg.Redactor
	if r == nil {
		return res
	}
	res.Content, res.Full = r.Redact(res.Content), r.Redact(res.Full)
	return res
}
