package adapterkit

import (
	"context"
	"io"
	"iter"
	"net/http"

	"github.com/agentfleet/agentfleet/llm"
)

// Post is one encoded request: where it goes, the headers beyond
// Content-Type and Accept, and the JSON body.
type Post struct {
	URL    string
	Header http.Header
	Body   []byte
}

// Client carries out llm.Client for one wire format. All fields are
// required.
type Client struct {
	// HTTP is how llm.Send sends and classifies.
	HTTP llm.HTTPConfig
	// Encode turns a request into the POST to send; its errors are
	// returned as they are.
	Encode func(req llm.Request, stream bool) (Post, error)
	// Parse reads a whole response body.
	Parse func(body []byte) (*llm.Response, error)
	// Decode reads an event stream and yields its events, ending with
	// exactly one terminal element unless yield returns false.
	Decode func(body io.Reader, yield func(llm.StreamEvent, error) bool)
	// ForcedAnswer reports whether Encode sends a request's ResponseFormat
	// as a forced tool call (llm.AsAnswerTool); see Answer. nil means
	// never.
	ForcedAnswer func(req llm.Request) bool
	// Authorize, when set, adds credentials to each attempt's request
	// just before it is sent (a bearer token that may be refreshed
	// between retries); an error it returns should be an *llm.Error
	// (ErrAuthentication). nil means the Post's headers suffice.
	Authorize func(ctx context.Context, r *http.Request) error
}

// Complete sends req and parses the whole answer.
func (c *Client) Complete(ctx context.Context, req llm.Request) (*llm.Response, error) {
	resp, err := c.send(ctx, req, false) //nolint:bodyclose // ReadResponse or YieldStream closes it
	if err != nil {
		return nil, err
	}
	out, err := ReadResponse(c.HTTP.Provider, resp, c.Parse)
	if err != nil {
		return nil, err
	}
	out, err = Answer(c.HTTP.Provider, req, c.forced(req), out)
	return out, llm.WithRequestID(err, resp.Header)
}

func (c *Client) forced(req llm.Request) bool { return c.ForcedAnswer != nil && c.ForcedAnswer(req) }

// Stream sends req with streaming on and yields the decoded events. The
// request is encoded and sent when iteration starts.
func (c *Client) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.StreamEvent, error] {
	return func(yield func(llm.StreamEvent, error) bool) {
		resp, err := c.send(ctx, req, true) //nolint:bodyclose // ReadResponse or YieldStream closes it
		if err != nil {
			yield(llm.StreamEvent{}, err)
			return
		}
		YieldStream(resp, EventStreamCheck(c.HTTP.Provider), AnswerDecode(c.HTTP.Provider, req, c.forced(req), c.Decode), yield) //nolint:bodyclose // YieldStream closes it
	}
}

// ReadResponse reads a whole answer with parse and closes its body; an
// error carries the response's request id. Every adapter's Complete ends
// with it, whatever sent the request.
func ReadResponse(provider string, resp *http.Response, parse func([]byte) (*llm.Response, error)) (*llm.Response, error) {
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, llm.WithRequestID(llm.ReadError(provider, err), resp.Header)
	}
	out, err := parse(body)
	if err != nil {
		return nil, llm.WithRequestID(err, resp.Header)
	}
	return out, nil
}

// YieldStream yields the events decode reads from a streamed answer, once
// check accepts the response (its Content-Type), and closes its body;
// errors carry the response's request id.
func YieldStream(resp *http.Response, check func(*http.Response) error,
	decode func(io.Reader, func(llm.StreamEvent, error) bool), yield func(llm.StreamEvent, error) bool) {
	defer func() { _ = resp.Body.Close() }()
	if err := check(resp); err != nil {
		yield(llm.StreamEvent{}, err)
		return
	}
	decode(resp.Body, func(ev llm.StreamEvent, err error) bool {
		return yield(ev, llm.WithRequestID(err, resp.Header))
	})
}

// EventStreamCheck is YieldStream's check of a Server-Sent Events answer
// (llm.CheckEventStream).
func EventStreamCheck(provider string) func(*http.Response) error {
	return func(r *http.Response) error {
		if e := llm.CheckEventStream(provider, r); e != nil {
			return e
		}
		return nil
	}
}

func (c *Client) send(ctx context.Context, req llm.Request, stream bool) (*http.Response, error) {
	p, err := c.Encode(req, stream)
	if err != nil {
		return nil, err
	}
	build := llm.PostJSON(p.URL, p.Body, p.Header, stream)
	if c.Authorize != nil {
		plain := build
		build = func(ctx context.Context) (*http.Request, error) {
			r, err := plain(ctx)
			if err != nil {
				return nil, err
			}
			if err := c.Authorize(ctx, r); err != nil {
				return nil, err
			}
			return r, nil
		}
	}
	return llm.Send(ctx, c.HTTP, build)
}

// YieldAll yields events in order; false means the consumer stopped.
func YieldAll(events []llm.StreamEvent, yield func(llm.StreamEvent, error) bool) bool {
	for _, e := range events {
		if !yield(e, nil) {
			return false
		}
	}
	return true
}
