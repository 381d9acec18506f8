package sim

import (
	"net/http"
	"sync"
)

// Dialect speaks one provider wire format. The server picks the first
// registered dialect whose Match accepts the request. Implementations are
// stateless and safe for concurrent use.
type Dialect interface {
	// Name is the provider name ("openai", "chatcompat", "anthropic", "gemini").
	Name() string
	// Match reports whether the request is for this dialect (by path).
	Match(r *http.Request) bool
	// Head returns the model the request names (used in the answer) and
	// whether the client asked for a streamed answer.
	Head(r *http.Request, body []byte) (model string, stream bool)
	// WriteWhole writes a complete non-streamed answer.
	WriteWhole(w http.ResponseWriter, rep Reply, model string)
	// WriteStream writes a streamed answer through sw, stopping as soon as
	// a write reports false.
	WriteStream(sw *StreamWriter, rep Reply, model string)
	// WriteError writes f as the provider's error response: status, headers
	// (use setFailureHeaders for Retry-After) and body.
	WriteError(w http.ResponseWriter, f Failure)
	// StreamError returns the SSE event (name, data) the provider sends
	// when an error happens mid-stream. An empty name means a data-only
	// event.
	StreamError(f Failure) (event, data string)
}

var (
	dialectsMu sync.Mutex
	dialects   []Dialect
)

// registerDialect adds a built-in dialect; each dialect file calls it from
// init.
func registerDialect(d Dialect) {
	dialectsMu.Lock()
	defer dialectsMu.Unlock()
	dialects = append(dialects, d)
}

func builtinDialects() []Dialect {
	dialectsMu.Lock()
	defer dialectsMu.Unlock()
	return append([]Dialect(nil), dialects...)
}
