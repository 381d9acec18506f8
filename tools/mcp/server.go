package mcp

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentfleet/agentfleet/execenv"
)

// ErrNoProcesses is the start error of a stdio server in an environment
// that cannot start long-lived processes.
var ErrNoProcesses = errors.New("the task's environment cannot start a long-lived process (stdio MCP servers need a local or SSH environment)")

// server is one configured MCP server and its current connection. The
// connection is made by start and remade by the first call after it broke
// (the process died, the HTTP session ended). mu guards sess, proc and
// tools; calls run concurrently on one session.
type server struct {
	cfg  ServerConfig
	opts *Options

	mu     sync.Mutex
	sess   *sdk.ClientSession
	proc   execenv.Process // nil for HTTP
	stderr *tailBuffer
	tools  []*sdk.Tool
	// secrets are the resolved values that held references, kept out of
	// error messages.
	secrets []string
	// resources is true when the server declared the resources capability.
	resources bool
	closed    bool
	// legacy is set when an auto-transport server fell back to HTTP+SSE,
	// so reconnects go there directly.
	legacy bool

	// onToolsChanged is called (from its own goroutine) after a
	// tools/list_changed notification was answered with a new list.
	onToolsChanged func()
	refreshMu      sync.Mutex // guards stopped and wg.Add
	stopped        bool
	wg             sync.WaitGroup // list refreshes in flight
}

// start connects and lists the tools, within cfg.StartTimeout.
func (s *server) start(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.StartTimeout)
	defer cancel()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.connectLocked(ctx)
}

// connectLocked makes a new connection, replacing a broken one.
func (s *server) connectLocked(ctx context.Context) error {
	if s.closed {
		return errors.New("the MCP client was closed")
	}
	s.dropLocked()
	transport, proc, err := s.transport(ctx)
	if err != nil {
		return err
	}
	client := sdk.NewClient(&sdk.Implementation{Name: "agentfleet", Version: "1"}, &sdk.ClientOptions{
		Capabilities:           &sdk.ClientCapabilities{},
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { s.refreshAsync() },
	})
	sess, err := client.Connect(ctx, transport, nil)
	if auto, ok := transport.(*autoTransport); ok && err != nil {
		sess, err = s.fallback(ctx, client, auto, err)
	}
	if err != nil {
		if proc != nil {
			_ = proc.Close()
		}
		return s.explain("initialize", ctx, err)
	}
	s.sess, s.proc = sess, proc
	caps := sess.InitializeResult().Capabilities
	s.resources = caps != nil && caps.Resources != nil
	if caps == nil || caps.Tools == nil {
		s.tools = nil
		return nil
	}
	tools, err := listTools(ctx, sess)
	if err != nil {
		s.dropLocked()
		return s.explain("tools/list", ctx, err)
	}
	s.tools = tools
	return nil
}

// transport builds the stdio or HTTP transport of the server (for HTTP,
// see httpTransport).
func (s *server) transport(ctx context.Context) (sdk.Transport, execenv.Process, error) {
	if s.cfg.URL != "" {
		headers, secret, err := s.opts.Secrets.resolveMap(s.cfg.Headers)
		s.secrets = secret
		if err != nil {
			return nil, nil, fmt.Errorf("header %w", err)
		}
		s.stderr = nil
		hc, err := s.opts.httpClient(s.cfg.URL, headers)
		if err != nil {
			return nil, nil, err
		}
		t, err := s.httpTransport(hc)
		return t, nil, err
	}
	starter, ok := s.opts.Env.(execenv.ProcessStarter)
	if !ok {
		return nil, nil, ErrNoProcesses
	}
	env, secret, err := s.opts.Secrets.resolveMap(s.cfg.Env)
	s.secrets = secret
	if err != nil {
		return nil, nil, fmt.Errorf("env %w", err)
	}
	s.stderr = newTailBuffer(4096)
	proc, err := starter.StartProcess(ctx, execenv.ProcessRequest{Command: s.cfg.ShellCommand(), Env: env, Stderr: s.stderr})
	if err != nil {
		return nil, nil, err
	}
	return &sdk.IOTransport{Reader: readOnly{proc}, Writer: proc}, proc, nil
}

// explain turns a failed step into an error that says what happened:
// a timeout, the process's exit and the tail of its standard error.
func (s *server) explain(step string, ctx context.Context, err error) error {
	msg := fmt.Sprintf("%s failed: %v", step, err)
	if ctx.Err() != nil {
		msg = fmt.Sprintf("%s did not answer within %s (does the command start an MCP server on stdio?)", step, s.cfg.StartTimeout)
	}
	if s.proc != nil || s.stderr != nil {
		if tail := strings.TrimSpace(s.stderr.String()); tail != "" {
			msg += "; its standard error ends with: " + tail
		}
		msg = redact(msg, s.secrets)
	}
	return errors.New(msg)
}

// dropLocked closes the current connection, if any.
func (s *server) dropLocked() {
	if s.sess != nil {
		_ = s.sess.Close()
		s.sess = nil
	}
	if s.proc != nil {
		_ = s.proc.Close()
		s.proc = nil
	}
}

// session returns a live session, reconnecting when the last one broke.
func (s *server) session(ctx context.Context) (*sdk.ClientSession, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sess != nil && !s.brokenLocked() {
		return s.sess, nil
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.StartTimeout)
	defer cancel()
	if err := s.connectLocked(ctx); err != nil {
		return nil, fmt.Errorf("restarting the MCP server %q: %w", s.cfg.Name, err)
	}
	return s.sess, nil
}

// brokenLocked reports whether the stdio process has exited.
func (s *server) brokenLocked() bool {
	if s.proc == nil {
		return false
	}
	select {
	case <-s.proc.Exited():
		return true
	default:
		return false
	}
}

// markBroken drops sess when it is still the current session, so the next
// call starts the server again.
func (s *server) markBroken(sess *sdk.ClientSession) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sess == sess {
		s.dropLocked()
	}
}

// hasResources reports whether the server declared resources.
func (s *server) hasResources() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.resources
}

// currentTools returns the last listed tools.
func (s *server) currentTools() []*sdk.Tool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tools
}

// refreshAsync re-lists the tools after a list_changed notification. It
// is called on the SDK's goroutine, which may have to deliver a response
// that a holder of mu waits for (a notification that arrives during
// start-up), so it takes only refreshMu and leaves the work to a goroutine.
func (s *server) refreshAsync() {
	s.refreshMu.Lock()
	defer s.refreshMu.Unlock()
	if s.stopped {
		return
	}
	s.wg.Go(func() {
		s.refresh()
	})
}

// refresh lists the current session's tools and tells the client.
func (s *server) refresh() {
	s.mu.Lock()
	sess := s.sess
	s.mu.Unlock()
	if sess == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.CallTimeout)
	defer cancel()
	tools, err := listTools(ctx, sess)
	s.mu.Lock()
	current, closed := s.sess == sess, s.closed
	if err == nil && current {
		s.tools = tools
	}
	s.mu.Unlock()
	switch {
	case closed || !current:
		return
	case err != nil:
		s.opts.warn(fmt.Sprintf("MCP server %q: listing its tools after a change failed: %v", s.cfg.Name, err))
		return
	}
	if s.onToolsChanged != nil {
		s.onToolsChanged()
	}
}

// close ends the connection and waits for refreshes in flight.
func (s *server) close() {
	s.refreshMu.Lock()
	s.stopped = true
	s.refreshMu.Unlock()
	s.mu.Lock()
	s.closed = true
	s.dropLocked()
	s.mu.Unlock()
	s.wg.Wait()
}

// listTools reads every page of tools/list.
func listTools(ctx context.Context, sess *sdk.ClientSession) ([]*sdk.Tool, error) {
	var out []*sdk.Tool
	for t, err := range sess.Tools(ctx, nil) {
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// readOnly hides Close, so the SDK closing its reader does not end the
// process before it closes the writer (which is the process's Close).
type readOnly struct{ p execenv.Process }

func (r readOnly) Read(b []byte) (int, error) { return r.p.Read(b) }
func (r readOnly) Close() error               { return nil }

// tailBuffer keeps the last n bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	n   int
	buf []byte
}

func newTailBuffer(n int) *tailBuffer { return &tailBuffer{n: n} }

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.n {
		t.buf = append([]byte(nil), t.buf[len(t.buf)-t.n:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	if t == nil {
		return ""
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}
