package sim

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentfleet/agentfleet/llm"
)

// RecordedRequest is one request the server received.
type RecordedRequest struct {
	Method  string
	Path    string // URL path, e.g. /v1/responses
	Query   string // raw query, e.g. alt=sse
	Header  http.Header
	Body    []byte
	Dialect string // name of the dialect that answered, "" when none matched
	// Tokens is the request's size as the server counts it (CountTokens),
	// set when a context window applies to its model.
	Tokens int
	// Constraints is the tool choice and response format the request
	// asked for, as its dialect reads them (see Constraints).
	Constraints Constraints
}

// Server is the simulated provider: an http.Handler that answers each
// request with the next scripted Reply in the request's wire format. All
// methods are safe for concurrent use.
type Server struct {
	hs       *httptest.Server // nil when used only as a Handler
	closing  chan struct{}
	closeOne sync.Once

	mu         sync.Mutex
	dialects   []Dialect
	script     []Reply
	def        *Reply
	requests   []RecordedRequest
	requestsCh chan struct{} // closed and replaced on every recorded request
	windows    []windowRule  // context windows by model prefix (window.go)
	responder  Responder     // answers before the script when set
	cache      *PromptCache  // nil: usage is the scripted one
	rate       *RateLimit    // nil: no limit enforced
}

// New returns a Server that is not listening: use it as an http.Handler
// (ListenAndServe wraps that). It speaks every built-in dialect.
func New() *Server {
	return &Server{closing: make(chan struct{}), dialects: builtinDialects(), requestsCh: make(chan struct{})}
}

// NewServer starts a Server on a loopback port. Close it when done.
func NewServer() *Server {
	s := New()
	s.hs = httptest.NewServer(s)
	return s
}

// ListenAndServe serves the script on addr until ctx ends. It is the
// standalone mode used by cmd/simllm.
func (s *Server) ListenAndServe(ctx context.Context, addr string) error {
	hs := &http.Server{Addr: addr, Handler: s, ReadHeaderTimeout: 10 * time.Second}
	stop := context.AfterFunc(ctx, func() {
		s.Close()
		_ = hs.Close()
	})
	defer stop()
	if err := hs.ListenAndServe(); err != nil && err != http.ErrServerClosed {
		return err
	}
	return nil
}

// URL is the base URL of a started server (no trailing slash).
func (s *Server) URL() string {
	if s.hs == nil {
		return ""
	}
	return s.hs.URL
}

// Close releases stalled handlers and stops the server. Safe to call twice.
func (s *Server) Close() {
	s.closeOne.Do(func() { close(s.closing) })
	if s.hs != nil {
		s.hs.Close()
	}
}

// AddDialect adds a dialect tried before the built-in ones.
func (s *Server) AddDialect(d Dialect) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dialects = append([]Dialect{d}, s.dialects...)
}

// Enqueue appends replies to the script; each request consumes one, in order.
func (s *Server) Enqueue(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script = append(s.script, replies...)
}

// SetDefault sets the reply used when the script is empty. Without one, an
// empty script is answered with HTTP 500 and a body saying so.
func (s *Server) SetDefault(rep Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.def = &rep
}

// Pending is the number of replies not yet consumed.
func (s *Server) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.script)
}

// Requests returns a copy of every request received so far, in order.
func (s *Server) Requests() []RecordedRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]RecordedRequest(nil), s.requests...)
}

// WaitRequests waits until at least n requests have arrived or ctx ends,
// and returns the requests received so far.
func (s *Server) WaitRequests(ctx context.Context, n int) ([]RecordedRequest, error) {
	for {
		s.mu.Lock()
		got, ch := len(s.requests), s.requestsCh
		s.mu.Unlock()
		if got >= n {
			return s.Requests(), nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return s.Requests(), fmt.Errorf("sim: waited for %d requests, got %d: %w", n, got, ctx.Err())
		}
	}
}

// ServeHTTP records the request and answers it from the script.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := ReadBody(r)
	if err != nil {
		http.Error(w, "sim: reading the request body: "+err.Error(), http.StatusBadRequest)
		return
	}
	s.ServeBody(w, r, body)
}

// ReadBody reads a request body whole, in one allocation when the request
// says its length.
func ReadBody(r *http.Request) ([]byte, error) {
	if r.ContentLength <= 0 || r.ContentLength > 1<<30 {
		return io.ReadAll(r.Body)
	}
	body := make([]byte, r.ContentLength)
	_, err := io.ReadFull(r.Body, body)
	return body, err
}

// ServeBody is ServeHTTP for a request whose body the caller has read
// already (r.Body is not read again).
func (s *Server) ServeBody(w http.ResponseWriter, r *http.Request, body []byte) {
	d := s.match(r)
	cons, err := constraintsOf(d, body)
	if err != nil {
		s.record(r, body, d, cons, 0, false)
		s.writeFailure(w, r, d, Failure{Kind: llm.ErrInvalidRequest, Message: err.Error()})
		return
	}
	tokens, window := s.measure(r, body, d)
	if window > 0 && tokens > window {
		s.record(r, body, d, cons, tokens, false)
		s.writeFailure(w, r, d, overflow(d, tokens, window))
		return
	}
	rep, ok := s.record(r, body, d, cons, tokens, true)
	if d == nil {
		http.Error(w, fmt.Sprintf("sim: no dialect serves %s %s; known paths: /v1/responses (openai), /v1/chat/completions (chatcompat), /v1/messages (anthropic), /v1beta/models/{model}:generateContent or :streamGenerateContent (gemini)", r.Method, r.URL.Path), http.StatusNotFound)
		return
	}
	if !ok {
		http.Error(w, "sim: script exhausted: no reply was enqueued for this request ("+r.Method+" "+r.URL.Path+"); call Enqueue before sending it, or SetDefault", http.StatusInternalServerError)
		return
	}
	if rep, err = cons.honour(rep); err != nil {
		http.Error(w, "sim: "+err.Error()+"; fix the script", http.StatusInternalServerError)
		return
	}
	if s.enforce(w, r, d) {
		return
	}
	if c := s.promptCache(); c != nil && rep.Failure == nil && rep.Raw == nil {
		c.account(d, r, body, &rep)
	}
	if rep.FirstByteDelay > 0 && !sleep(r.Context(), s.closing, rep.FirstByteDelay) {
		return
	}
	for k, vs := range rep.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	switch model, stream := d.Head(r, body); {
	case rep.Raw != nil:
		s.writeRaw(w, r, rep)
	case rep.Failure != nil:
		s.writeFailure(w, r, d, *rep.Failure)
	case stream:
		d.WriteStream(newStreamWriter(w, r, s.closing, rep, d), rep, model)
	default:
		d.WriteWhole(w, rep, model)
	}
}

// constraintsOf reads what the request asks of its answer's form when its
// dialect knows how.
func constraintsOf(d Dialect, body []byte) (Constraints, error) {
	if c, ok := d.(constrainer); ok {
		return c.Constraints(body)
	}
	return Constraints{}, nil
}

func (s *Server) promptCache() *PromptCache {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cache
}

func (s *Server) match(r *http.Request) Dialect {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, d := range s.dialects {
		if d.Match(r) {
			return d
		}
	}
	return nil
}

// record stores the request and, when pop is set, takes the reply for it:
// the responder's, else the script's next, else the default. A counted
// request (tokens > 0) reports its size as input tokens when the reply
// leaves them 0.
func (s *Server) record(r *http.Request, body []byte, d Dialect, cons Constraints, tokens int, pop bool) (Reply, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec := RecordedRequest{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Header: r.Header.Clone(), Body: body, Tokens: tokens, Constraints: cons}
	if d != nil {
		rec.Dialect = d.Name()
	}
	s.requests = append(s.requests, rec)
	close(s.requestsCh)
	s.requestsCh = make(chan struct{})
	if d == nil || !pop {
		return Reply{}, false
	}
	rep, ok := s.next(rec)
	if ok && tokens > 0 && rep.Usage.InputTokens == 0 {
		rep.Usage.InputTokens = tokens
	}
	return rep, ok
}

// next is the reply for rec. The caller holds s.mu.
func (s *Server) next(rec RecordedRequest) (Reply, bool) {
	if s.responder != nil {
		if rep, ok := s.responder(rec); ok {
			return rep, true
		}
	}
	if len(s.script) > 0 {
		rep := s.script[0]
		s.script = s.script[1:]
		return rep, true
	}
	if s.def != nil {
		return *s.def, true
	}
	return Reply{}, false
}

// writeFailure answers the kinds that are the same for every dialect and
// hands the rest to the dialect.
func (s *Server) writeFailure(w http.ResponseWriter, r *http.Request, d Dialect, f Failure) {
	switch {
	case f.HTML:
		writeHTMLPage(w, f)
	case f.Kind == llm.ErrTransport:
		panic(http.ErrAbortHandler) // close the connection with no response
	case f.Kind == llm.ErrStreamInterrupted:
		w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
		w.WriteHeader(http.StatusOK)
		flush(w)
		panic(http.ErrAbortHandler)
	case f.Kind == llm.ErrCanceled:
		select { // never answer; the client must give up
		case <-r.Context().Done():
		case <-s.closing:
		}
	case f.Kind == llm.ErrInvalidResponse:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, "this is not JSON {")
	default:
		d.WriteError(w, f)
	}
}

func writeHTMLPage(w http.ResponseWriter, f Failure) {
	status := f.Status
	if status == 0 {
		status = http.StatusBadGateway
	}
	setFailureHeaders(w.Header(), f)
	w.Header().Set("Content-Type", "text/html")
	w.WriteHeader(status)
	text := strconv.Itoa(status) + " " + http.StatusText(status)
	_, _ = io.WriteString(w, "<html>\r\n<head><title>"+text+"</title></head>\r\n<body>\r\n<center><h1>"+text+"</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n")
}

// writeRaw serves a recorded response, cutting its body into pieces.
func (s *Server) writeRaw(w http.ResponseWriter, r *http.Request, rep Reply) {
	raw := rep.Raw
	for k, vs := range raw.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	status := raw.Status
	if status == 0 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
	pieces := []string{raw.Body}
	if rep.ChunkSize > 0 {
		pieces = chunks(raw.Body, rep.ChunkSize)
	}
	for i, p := range pieces {
		if rep.CutAfterChunks > 0 && i >= rep.CutAfterChunks {
			flush(w)
			panic(http.ErrAbortHandler)
		}
		if rep.StallAfterChunks > 0 && i >= rep.StallAfterChunks {
			flush(w)
			sleep(r.Context(), s.closing, time.Duration(1<<62))
			return
		}
		if i > 0 && rep.ChunkDelay > 0 && !sleep(r.Context(), s.closing, rep.ChunkDelay) {
			return
		}
		_, _ = io.WriteString(w, p)
		if len(pieces) > 1 {
			flush(w)
		}
	}
}

// hasSuffixPath reports whether the request path ends with suffix.
func hasSuffixPath(r *http.Request, suffix string) bool {
	return strings.HasSuffix(r.URL.Path, suffix)
}
