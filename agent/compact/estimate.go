package compact

import (
	"math"
	"regexp"
	"strconv"

	"github.com/agentfleet/agentfleet/llm"
)

// CharsPerToken is the first guess of a token's size in characters: about
// four for English text and source code. It only has to be close until
// the provider reports a request's tokens: from then on the Estimator uses
// the ratio it measured for the session.
const CharsPerToken = 4

// imageChars counts an image as 2,000 tokens.
const imageChars = 2000 * CharsPerToken

// messageOverhead counts the structure around each message and part (role,
// part type, ids) that the characters of its content do not.
const messageOverhead = 16

// MessageChars counts the characters of m the model reads.
func MessageChars(m llm.Message) int {
	n := messageOverhead
	for _, p := range m.Content {
		n += PartChars(p)
	}
	return n
}

// PartChars counts the characters of one content part.
func PartChars(p llm.ContentPart) int {
	n := messageOverhead / 2
	switch {
	case p.Kind == llm.KindText:
		n += len(p.Text)
	case p.Kind == llm.KindImage:
		n += imageChars
	case p.Kind == llm.KindToolCall && p.ToolCall != nil:
		n += len(p.ToolCall.ID) + len(p.ToolCall.Name) + len(p.ToolCall.Arguments)
	case p.Kind == llm.KindToolResult && p.ToolResult != nil:
		n += len(p.ToolResult.ToolCallID) + len(p.ToolResult.Name) + len(p.ToolResult.Content) + imageChars*len(p.ToolResult.Images)
	case p.Kind == llm.KindReasoning && p.Reasoning != nil:
		n += len(p.Reasoning.Text) + len(p.Reasoning.Signature) + len(p.Reasoning.Data)
	}
	return n
}

// ToolChars counts the characters of the tool definitions.
func ToolChars(defs []llm.ToolDefinition) int {
	n := 0
	for _, d := range defs {
		n += messageOverhead + len(d.Name) + len(d.Description) + len(d.Parameters)
	}
	return n
}

// RequestChars counts the characters of a whole request: messages
// (system prompt included) and tool definitions.
func RequestChars(req llm.Request) int {
	n := ToolChars(req.Tools)
	for _, m := range req.Messages {
		n += MessageChars(m)
	}
	return n
}

// Estimator estimates a request's size in tokens before it is sent: the
// input tokens the provider reported for the previous request plus an
// estimate of what was added since, at a characters-per-token ratio
// calibrated on the session's reported usage. It is owned by one session's
// loop goroutine.
type Estimator struct {
	ratio      float64 // tokens per CharsPerToken characters; 0 means 1
	lastChars  int     // characters of the last request with reported usage
	lastTokens int     // the input tokens reported for it
	prefix     bool    // the next request starts with that request
}

// Estimate returns the tokens of a request of chars characters.
func (e *Estimator) Estimate(chars int) int {
	if e.prefix && e.lastTokens > 0 && chars >= e.lastChars {
		return e.lastTokens + e.Tokens(chars-e.lastChars)
	}
	return e.Tokens(chars)
}

// Tokens converts characters to tokens at the calibrated ratio, rounding up.
func (e *Estimator) Tokens(chars int) int {
	r := e.ratio
	if r == 0 {
		r = 1
	}
	return int(math.Ceil(float64(chars) * r / CharsPerToken))
}

// Observe calibrates on a response: the request had chars characters and
// the provider counted tokens input tokens (0: not reported, ignored).
func (e *Estimator) Observe(chars, tokens int) {
	if tokens <= 0 || chars <= 0 {
		return
	}
	e.lastChars, e.lastTokens, e.prefix = chars, tokens, true
	e.ratio = clampRatio(float64(tokens) * CharsPerToken / float64(chars))
}

// Reset says the next request no longer starts with the last one (the
// history was compacted); the calibrated ratio stays.
func (e *Estimator) Reset() { e.prefix = false }

// Overflowed recalibrates after the provider refused a request of chars
// characters as too long: from the size its error names when it names one
// (tokens > 0), else by raising the ratio by a quarter.
func (e *Estimator) Overflowed(chars, tokens int) {
	e.prefix = false
	if tokens > 0 && chars > 0 {
		e.ratio = clampRatio(max(float64(tokens)*CharsPerToken/float64(chars), e.ratio))
		return
	}
	r := e.ratio
	if r == 0 {
		r = 1
	}
	e.ratio = clampRatio(r * 1.25)
}

// Ratio is the calibrated tokens per CharsPerToken characters (1 before
// any report).
func (e *Estimator) Ratio() float64 {
	if e.ratio == 0 {
		return 1
	}
	return e.ratio
}

func clampRatio(r float64) float64 { return min(max(r, 0.25), 4) }

// sizesInError find the request size and the window a provider's
// context-length message names: "prompt is too long: 208310 tokens >
// 200000 maximum" (Anthropic), "The input token count (1196265) exceeds
// the maximum number of tokens allowed (1048576)." (Gemini), "maximum
// context length is 128000 tokens. However, your messages resulted in
// 130000 tokens" (OpenAI Chat Completions and the servers copying it).
var sizesInError = []struct {
	re            *regexp.Regexp
	tokens, limit int // submatch indexes
}{
	{regexp.MustCompile(`too long: (\d+) tokens > (\d+)`), 1, 2},
	{regexp.MustCompile(`input token count \((\d+)\) exceeds the maximum number of tokens allowed \((\d+)\)`), 1, 2},
	{regexp.MustCompile(`maximum context length is (\d+) tokens\. However, your messages resulted in (\d+) tokens`), 2, 1},
}

// SizesInError returns the request size and the window a context-length
// error message names, or zeros for what it does not name.
func SizesInError(msg string) (tokens, window int) {
	for _, s := range sizesInError {
		if m := s.re.FindStringSubmatch(msg); m != nil {
			tokens, _ = strconv.Atoi(m[s.tokens])
			window, _ = strconv.Atoi(m[s.limit])
			return tokens, window
		}
	}
	return 0, 0
}
