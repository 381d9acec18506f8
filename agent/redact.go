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
// It matches values exactly, as bytes, scanning left to right; at each
// position the longest value that matches wins. A value printed in
// another encoding (base64, URL-escaped) is not recognized. A nil
// *Redactor redacts nothing.
type Redactor struct {
	values []string // longest first
	marks  map[string]string
	first  [256]bool // the first bytes of the values
}

// NewRedactor builds a Redactor of secrets (name → value). Values shorter
// than MinSecretLen are left out; a value known under several names is
// reported under the first of them in sorted order. It returns nil when
// no value is left.
func NewRedactor(secrets map[string]string) *Redactor {
	r := &Redactor{marks: map[string]string{}}
	for _, name := range slices.Sorted(maps.Keys(secrets)) {
		v := secrets[name]
		if _, dup := r.marks[v]; len(v) >= MinSecretLen && !dup {
			r.marks[v] = "[redacted:" + name + "]"
			r.first[v[0]] = true
		}
	}
	if len(r.marks) == 0 {
		return nil
	}
	r.values = slices.SortedFunc(maps.Keys(r.marks), func(a, b string) int { return cmp.Or(len(b)-len(a), strings.Compare(a, b)) })
	return r
}

// Redact returns s with every known secret value replaced.
func (r *Redactor) Redact(s string) string {
	if r == nil || s == "" {
		return s
	}
	out, _ := r.scan(s, true)
	return out
}

// scan redacts s from the left. Unless final, it stops at the first
// position where s's remainder is the start of a value (shorter than
// it), since what comes next decides whether and which value matches
// there, and returns that remainder unredacted as rest.
func (r *Redactor) scan(s string, final bool) (out, rest string) {
	var b strings.Builder
	for i := 0; i < len(s); {
		if !r.first[s[i]] {
			j := i + 1
			for j < len(s) && !r.first[s[j]] {
				j++
			}
			b.WriteString(s[i:j])
			i = j
			continue
		}
		if !final && r.mayStart(s[i:]) {
			return b.String(), s[i:]
		}
		if v, ok := r.matchAt(s[i:]); ok {
			b.WriteString(r.marks[v])
			i += len(v)
			continue
		}
		b.WriteByte(s[i])
		i++
	}
	return b.String(), ""
}

// matchAt returns the longest value s starts with.
func (r *Redactor) matchAt(s string) (string, bool) {
	for _, v := range r.values {
		if strings.HasPrefix(s, v) {
			return v, true
		}
	}
	return "", false
}

// mayStart reports whether s is the start of a value longer than s.
func (r *Redactor) mayStart(s string) bool {
	for _, v := range r.values {
		if len(v) > len(s) && strings.HasPrefix(v, s) {
			return true
		}
	}
	return false
}

// Stream wraps emit, a consumer of output chunks, so that it sees the
// chunks redacted as Redact would redact them joined, a secret split
// across chunks included: the end of a chunk that may begin a secret is
// held back until the next chunk (or flush) decides. Call flush once,
// after the last chunk; chunks come one at a time.
func (r *Redactor) Stream(emit func(string)) (write func(string), flush func()) {
	if r == nil {
		return emit, func() {}
	}
	var pending string
	write = func(chunk string) {
		var out string
		out, pending = r.scan(pending+chunk, false)
		if out != "" {
			emit(out)
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
