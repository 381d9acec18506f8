package mcp

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentfleet/agentfleet/internal/outbound"
)

// maxSSEEvent bounds one server-sent event (a line or an event's data):
// a larger one ends the stream with an error instead of filling memory.
const maxSSEEvent = 16 << 20

// httpTransport is the transport of the HTTP server by its Transport
// setting, its requests made with hc (the outbound guard's client). In
// auto mode a server that fell back to HTTP+SSE once is reached over
// HTTP+SSE from then on (s.legacy), so a reconnect does not probe again.
func (s *server) httpTransport(hc *http.Client) (sdk.Transport, error) {
	u, err := url.Parse(s.cfg.URL)
	if err != nil {
		return nil, fmt.Errorf("url %q: %v", s.cfg.URL, err)
	}
	sse := &sseTransport{server: u, client: hc}
	switch {
	case s.cfg.Transport == TransportSSE || (s.legacy && s.cfg.Transport != TransportStreamable):
		return sse, nil
	case s.cfg.Transport == TransportStreamable:
		return &sdk.StreamableClientTransport{Endpoint: s.cfg.URL, HTTPClient: hc, MaxRetries: -1}, nil
	}
	probe := &statusProbe{base: hc.Transport}
	probed := *hc
	probed.Transport = probe
	return &autoTransport{
		StreamableClientTransport: &sdk.StreamableClientTransport{Endpoint: s.cfg.URL, HTTPClient: &probed, MaxRetries: -1},
		probe:                     probe,
		sse:                       sse,
	}, nil
}

// autoTransport is streamable HTTP with what a fallback to HTTP+SSE needs:
// the status the server answered the initialize POST with, and the SSE
// transport to try next.
type autoTransport struct {
	*sdk.StreamableClientTransport
	probe *statusProbe
	sse   *sseTransport
}

// fallback connects over HTTP+SSE after the streamable-HTTP initialize
// failed with err, when the server answered it 400, 404 or 405 (what a
// server of the older transport answers a POST to its stream URL, as the
// MCP specification's backwards-compatibility section describes);
// otherwise it returns err unchanged.
func (s *server) fallback(ctx context.Context, client *sdk.Client, auto *autoTransport, err error) (*sdk.ClientSession, error) {
	status := auto.probe.first()
	if ctx.Err() != nil || (status != http.StatusBadRequest && status != http.StatusNotFound && status != http.StatusMethodNotAllowed) {
		return nil, err
	}
	sess, sseErr := client.Connect(ctx, auto.sse, nil)
	if sseErr != nil {
		return nil, fmt.Errorf("the server answered the streamable-HTTP initialize with %d %s, and the HTTP+SSE transport failed too: %w (is the URL right? transport pins one)",
			status, http.StatusText(status), sseErr)
	}
	s.legacy = true
	return sess, nil
}

// statusProbe passes requests to base and keeps the status of the first
// POST's final answer (a redirect is not one): the initialize request's.
type statusProbe struct {
	base   http.RoundTripper
	mu     sync.Mutex
	status int
}

func (p *statusProbe) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := p.base.RoundTrip(req)
	if err == nil && req.Method == http.MethodPost && (resp.StatusCode < 300 || resp.StatusCode >= 400) {
		p.mu.Lock()
		if p.status == 0 {
			p.status = resp.StatusCode
		}
		p.mu.Unlock()
	}
	return resp, err
}

// CloseIdleConnections lets http.Client.CloseIdleConnections reach base.
func (p *statusProbe) CloseIdleConnections() {
	if c, ok := p.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

func (p *statusProbe) first() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.status
}

// sseTransport is the client side of MCP's HTTP+SSE transport (protocol
// 2024-11-05): a GET of the server URL opens an event stream whose first
// event, "endpoint", names the URL to POST messages to; answers and the
// server's own requests and notifications arrive as "message" events on
// the stream. The endpoint is resolved against the server URL and must be
// on its origin. Every request is made with client, the outbound guard's.
type sseTransport struct {
	server *url.URL
	client *http.Client
}

// Connect opens the stream and waits, within ctx, for the endpoint event.
// The stream itself outlives ctx: it ends with the connection's Close.
func (t *sseTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	streamCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	unhook := context.AfterFunc(ctx, stop)
	fail := func(body io.Closer, err error) (sdk.Connection, error) {
		if body != nil {
			_ = body.Close()
		}
		stop()
		if ctx.Err() != nil {
			return nil, fmt.Errorf("opening the SSE stream: %w", ctx.Err())
		}
		return nil, err
	}
	req, err := http.NewRequestWithContext(streamCtx, http.MethodGet, t.server.String(), nil)
	if err != nil {
		return fail(nil, err)
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := t.client.Do(req) //nolint:bodyclose // the stream's reader closes it when the connection ends
	if err != nil {
		return fail(nil, fmt.Errorf("opening the SSE stream: %w", err))
	}
	if resp.StatusCode/100 != 2 {
		return fail(resp.Body, fmt.Errorf("the SSE stream's GET was answered %s", resp.Status))
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "text/event-stream" {
		return fail(resp.Body, fmt.Errorf("the SSE stream's GET was answered with %q, not text/event-stream", resp.Header.Get("Content-Type")))
	}
	events := newEventReader(resp.Body)
	ev, err := events.next()
	if err != nil {
		return fail(resp.Body, fmt.Errorf("the SSE stream ended before its endpoint event: %w", err))
	}
	if ev.name != "endpoint" {
		return fail(resp.Body, fmt.Errorf("the SSE stream's first event is %q, want \"endpoint\" (is this an HTTP+SSE MCP server?)", ev.name))
	}
	endpoint, err := t.endpoint(ev.data)
	if err != nil {
		return fail(resp.Body, err)
	}
	if !unhook() {
		return fail(resp.Body, ctx.Err())
	}
	c := &sseConn{client: t.client, endpoint: endpoint, body: resp.Body, stop: stop,
		incoming: make(chan []byte), done: make(chan struct{}), ended: make(chan struct{})}
	go c.readLoop(events)
	return c, nil
}

// endpoint resolves the endpoint event's data against the server URL and
// refuses another origin: the session's messages and the server's
// headers go to the server's own origin only.
func (t *sseTransport) endpoint(data string) (*url.URL, error) {
	raw := strings.TrimSpace(data)
	u, err := t.server.Parse(raw)
	if err != nil || raw == "" {
		return nil, fmt.Errorf("the server's endpoint event %q is not a URL", raw)
	}
	if !outbound.SameOrigin(u, t.server) {
		return nil, fmt.Errorf("the server's endpoint event names %s, on another origin than the server's %s://%s; "+
			"refusing to send the session's messages there (an HTTP+SSE server must take them on its own origin)",
			u.Redacted(), t.server.Scheme, t.server.Host)
	}
	u.Fragment = ""
	return u, nil
}

// sseConn is one HTTP+SSE connection: Write POSTs a message to the
// endpoint, Read takes the next "message" event of the stream. Close ends
// the stream and waits for its reader.
type sseConn struct {
	client   *http.Client
	endpoint *url.URL
	body     io.Closer
	stop     context.CancelFunc

	incoming  chan []byte
	done      chan struct{} // closed by Close
	ended     chan struct{} // closed when readLoop returns
	streamErr error         // why the stream ended; set before ended closes
	closeOnce sync.Once
}

// readLoop hands the stream's message events to Read until the stream
// ends or the connection closes. Other events are ignored.
func (c *sseConn) readLoop(events *eventReader) {
	defer close(c.ended)
	for {
		ev, err := events.next()
		if err != nil {
			c.streamErr = err
			return
		}
		if ev.name != "message" {
			continue
		}
		select {
		case c.incoming <- []byte(ev.data):
		case <-c.done:
			return
		}
	}
}

func (c *sseConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.done:
		return nil, io.EOF
	case <-c.ended:
		if c.streamErr == nil || errors.Is(c.streamErr, io.EOF) {
			return nil, io.EOF
		}
		return nil, fmt.Errorf("the SSE stream broke: %w", c.streamErr)
	case data := <-c.incoming:
		msg, err := jsonrpc.DecodeMessage(data)
		if err != nil {
			return nil, fmt.Errorf("the SSE stream carried a message that is not JSON-RPC: %w", err)
		}
		return msg, nil
	}
}

func (c *sseConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	select {
	case <-c.done:
		return io.EOF
	case <-c.ended:
		return io.EOF
	default:
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint.String(), bytes.NewReader(data))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.client.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("the server answered the POST of a message to %s with %s", c.endpoint.Path, resp.Status)
	}
	return nil
}

func (c *sseConn) Close() error {
	c.closeOnce.Do(func() {
		close(c.done)
		c.stop()
		_ = c.body.Close()
		<-c.ended
		c.client.CloseIdleConnections()
	})
	return nil
}

func (c *sseConn) SessionID() string { return "" }

// event is one server-sent event; name is "message" unless the event
// named another.
type event struct{ name, data string }

// eventReader reads server-sent events (the WHATWG event-stream format:
// "field: value" lines, an empty line ending an event, ':' comments),
// each line and event at most maxSSEEvent bytes.
type eventReader struct{ sc *bufio.Scanner }

func newEventReader(r io.Reader) *eventReader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxSSEEvent)
	return &eventReader{sc: sc}
}

// next returns the next event with data; io.EOF when the stream ended
// (an event cut off by the end is dropped, as the format says).
func (r *eventReader) next() (event, error) {
	var name string
	var data strings.Builder
	hasData := false
	for r.sc.Scan() {
		line := r.sc.Text()
		if line == "" {
			if hasData {
				if name == "" {
					name = "message"
				}
				return event{name: name, data: strings.TrimSuffix(data.String(), "\n")}, nil
			}
			name = ""
			continue
		}
		if strings.HasPrefix(line, ":") {
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "event":
			name = value
		case "data":
			if data.Len()+len(value) > maxSSEEvent {
				return event{}, fmt.Errorf("an event of the SSE stream is larger than %d bytes", maxSSEEvent)
			}
			data.WriteString(value)
			data.WriteByte('\n')
			hasData = true
		}
	}
	if err := r.sc.Err(); err != nil {
		return event{}, err
	}
	return event{}, io.EOF
}
