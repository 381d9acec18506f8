package mcp

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"sort"
	"sync"

	"github.com/agentfleet/agentfleet/execenv"
	"github.com/agentfleet/agentfleet/internal/outbound"
	"github.com/agentfleet/agentfleet/tools"
)

// Options are what a Client needs besides the servers.
type Options struct {
	// Env starts stdio servers (it must implement execenv.ProcessStarter):
	// the task's environment, so a server runs where the task's commands
	// run and under the same confinement.
	Env execenv.Environment
	// Secrets resolves references in env values and headers.
	Secrets Secrets
	// HTTPAllow lists further URLs an HTTP server's redirects may lead
	// to, besides its own URL's origin (the operator's
	// mcp_http_allowlist). Requests go through the outbound guard
	// (internal/outbound): a redirect elsewhere is refused, and one to
	// another origin carries none of the server's headers.
	HTTPAllow []string
	// AllowPrivate are the internal addresses HTTP servers may be
	// reached at (the operator's outbound_allow_private); nil allows none.
	AllowPrivate []netip.Prefix
	// Warn receives what goes wrong after start-up (a list refresh that
	// failed); the worker turns it into a WARNING event. nil logs it.
	Warn func(msg string)
	// Logger receives diagnostics; nil means slog.Default().
	Logger *slog.Logger
}

// httpClient is the client of the HTTP server at endpoint: through the
// outbound guard, headers sent to the endpoint's origin only.
func (o *Options) httpClient(endpoint string, headers map[string]string) (*http.Client, error) {
	u, err := url.Parse(endpoint)
	if err != nil {
		return nil, fmt.Errorf("url %q: %v", endpoint, err)
	}
	allow, err := outbound.ParseAllowlist("mcp_http_allowlist", append(slices.Clip(o.HTTPAllow), u.Scheme+"://"+u.Host))
	if err != nil {
		return nil, err
	}
	h := http.Header{}
	for k, v := range headers {
		h.Set(k, v)
	}
	return outbound.Client(outbound.Policy{Allow: allow, AllowPrivate: o.AllowPrivate, Headers: h}), nil
}

func (o *Options) warn(msg string) {
	if o.Warn != nil {
		o.Warn(msg)
		return
	}
	if o.Logger != nil {
		o.Logger.Warn(msg)
		return
	}
	slog.Warn(msg)
}

// StartError is a server that could not be started.
type StartError struct {
	Server   string
	Required bool
	Err      error
}

func (e *StartError) Error() string {
	return fmt.Sprintf("MCP server %q could not be started: %v", e.Server, e.Err)
}

func (e *StartError) Unwrap() error { return e.Err }

// Client holds the connections to a session's MCP servers and the tools
// they offer. It is safe for concurrent use; Close ends every server.
type Client struct {
	opts    Options
	servers []*server // started ones, in configuration order

	mu  sync.Mutex // guards reg and offered
	reg *tools.Registry
	// offered are the names this client registered in reg, so a refresh
	// removes those a server no longer lists.
	offered map[string]bool
}

// Start starts every server concurrently, each within its StartTimeout.
// The servers that failed are returned as StartErrors (in configuration
// order) and left out; the caller decides what a failure means (a WARNING
// event, or a failed task for a Required one). A nil Client is never
// returned.
func Start(ctx context.Context, cfgs []ServerConfig, opts Options) (*Client, []*StartError) {
	c := &Client{opts: opts, offered: map[string]bool{}}
	all := make([]*server, len(cfgs))
	errs := make([]*StartError, len(cfgs))
	var wg sync.WaitGroup
	for i, cfg := range cfgs {
		s := &server{cfg: cfg.WithDefaults(), opts: &c.opts}
		s.onToolsChanged = c.refresh
		all[i] = s
		wg.Go(func() {
			if err := s.start(ctx); err != nil {
				s.close()
				errs[i] = &StartError{Server: cfg.Name, Required: cfg.Required, Err: err}
			}
		})
	}
	wg.Wait()
	var failed []*StartError
	for i, s := range all {
		if errs[i] != nil {
			failed = append(failed, errs[i])
			continue
		}
		c.servers = append(c.servers, s)
	}
	return c, failed
}

// Servers names the servers that started.
func (c *Client) Servers() []string {
	names := make([]string, len(c.servers))
	for i, s := range c.servers {
		names[i] = s.cfg.Name
	}
	return names
}

// Tools returns the tools to offer the model: mcp__<server>__<tool> for
// every listed tool, then the two resource tools when a server offers
// resources.
func (c *Client) Tools() []tools.Tool {
	var out []tools.Tool
	for _, s := range c.servers {
		for _, t := range s.currentTools() {
			out = append(out, s.tool(t))
		}
	}
	if c.anyResources() {
		out = append(out, c.listResourcesTool(), c.readResourceTool())
	}
	return out
}

// Register offers the tools in reg and keeps them current: a server's
// tools/list_changed notification re-registers its tools there.
func (c *Client) Register(reg *tools.Registry) {
	c.mu.Lock()
	c.reg = reg
	c.mu.Unlock()
	c.refresh()
}

// refresh brings the registry in line with the servers' current tools.
func (c *Client) refresh() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.reg == nil {
		return
	}
	now := map[string]bool{}
	for _, t := range c.Tools() {
		c.reg.Register(t)
		now[t.Name] = true
	}
	stale := make([]string, 0)
	for name := range c.offered {
		if !now[name] {
			stale = append(stale, name)
		}
	}
	sort.Strings(stale)
	for _, name := range stale {
		c.reg.Unregister(name)
	}
	c.offered = now
}

// Close ends every server; safe to call more than once.
func (c *Client) Close() error {
	for _, s := range c.servers {
		s.close()
	}
	return nil
}

// anyResources reports whether a started server declared resources.
func (c *Client) anyResources() bool {
	for _, s := range c.servers {
		if s.hasResources() {
			return true
		}
	}
	return false
}

// byName returns the started server of that name.
func (c *Client) byName(name string) (*server, error) {
	for _, s := range c.servers {
		if s.cfg.Name == name {
			return s, nil
		}
	}
	return nil, fmt.Errorf("no MCP server is named %q; the servers are %v", name, c.Servers())
}
