package outbound

import (
	"fmt"
	"maps"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"
)

// DefaultMaxRedirects is the hop cap of a Policy that sets none.
const DefaultMaxRedirects = 5

// alwaysSecret are the headers a redirect to another origin always drops.
var alwaysSecret = []string{"Authorization", "Proxy-Authorization", "Cookie", "Private-Token"}

// Policy is what a caller's outbound requests may do.
type Policy struct {
	// Allow lists the URLs requests may go to; every redirect hop is
	// checked against it too. The zero value admits nothing: callers
	// without a list of their own (webhooks, forges) pass AnyURL().
	Allow Allowlist
	// AllowPrivate are the special addresses (loopback, private, ...) the
	// operator lets requests reach; nil admits none.
	AllowPrivate []netip.Prefix
	// Headers are secret headers of the caller's own (an MCP server's
	// Authorization): set on the first request of each exchange and on
	// redirect hops that stay on its origin, never sent to another.
	Headers http.Header
	// SecretHeaders are further header names a redirect to another origin
	// drops; Authorization, Proxy-Authorization, Cookie, Private-Token and
	// the names of Headers always are.
	SecretHeaders []string
	// MaxRedirects caps the hops followed (0: DefaultMaxRedirects;
	// negative: none, the redirect response is returned as it is).
	MaxRedirects int
	// Timeout is the client's whole-exchange timeout (0: none).
	Timeout time.Duration
	// DialTimeout bounds one connection (0: DefaultDialTimeout).
	DialTimeout time.Duration
}

// Client returns an http.Client that sends requests through Transport(p)
// and follows redirects by p (see CheckRedirect).
func Client(p Policy) *http.Client {
	return &http.Client{Transport: Transport(p), CheckRedirect: p.CheckRedirect, Timeout: p.Timeout}
}

// Transport returns a RoundTripper that refuses a request whose URL p's
// allowlist does not admit, adds p.Headers to the first request of an
// exchange (not to redirect hops: CheckRedirect decides those), and dials
// through a Dialer of p.AllowPrivate. It ignores HTTP(S)_PROXY: a proxy
// would resolve names where the guard cannot see the addresses.
func Transport(p Policy) http.RoundTripper {
	base := &http.Transport{
		Proxy:                 nil,
		DialContext:           NewDialer(p.AllowPrivate, p.DialTimeout).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          16,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
	return &guard{p: p, base: base}
}

// guard checks every request, first and hops, before it is sent.
type guard struct {
	p    Policy
	base *http.Transport
}

func (g *guard) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := g.p.Allow.Check(req.URL); err != nil {
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, err
	}
	if req.Response == nil && len(g.p.Headers) > 0 {
		req = req.Clone(req.Context())
		maps.Copy(req.Header, g.p.Headers)
	}
	return g.base.RoundTrip(req)
}

// CloseIdleConnections closes the idle connections of the transport.
func (g *guard) CloseIdleConnections() { g.base.CloseIdleConnections() }

// CheckRedirect is the redirect policy of Client: a hop beyond the cap
// or off the allowlist ends the exchange with an error; a hop to another
// origin (scheme, host and port) than the first request's, or any hop
// after one did, carries none of the secret headers; a hop that stays on
// the origin carries p.Headers again.
func (p Policy) CheckRedirect(req *http.Request, via []*http.Request) error {
	max := p.MaxRedirects
	if max == 0 {
		max = DefaultMaxRedirects
	}
	if max < 0 {
		return http.ErrUseLastResponse
	}
	if len(via) > max {
		return fmt.Errorf("outbound: stopped after %d redirects", max)
	}
	if err := p.Allow.Check(req.URL); err != nil {
		return fmt.Errorf("outbound: refusing a redirect: %w", err)
	}
	first := origin(via[0].URL)
	stays := origin(req.URL) == first
	for _, r := range via[1:] {
		stays = stays && origin(r.URL) == first
	}
	if stays {
		maps.Copy(req.Header, p.Headers)
		return nil
	}
	for _, k := range p.secretNames() {
		req.Header.Del(k)
	}
	return nil
}

// secretNames are the header names a cross-origin hop drops.
func (p Policy) secretNames() []string {
	names := append([]string{}, alwaysSecret...)
	names = append(names, p.SecretHeaders...)
	for k := range p.Headers {
		names = append(names, k)
	}
	return names
}

// SameOrigin reports whether a and b have one origin: scheme, host and
// port, the default port made explicit and the host compared as the
// allowlist compares it (lower-case ASCII after IDNA, an IP address in
// its canonical form). tools/mcp uses it to keep an HTTP+SSE server's
// message endpoint on the server's origin.
func SameOrigin(a, b *url.URL) bool { return origin(a) == origin(b) }

// origin is scheme://host:port of u, the port made explicit and the host
// normalised, so equal origins compare equal.
func origin(u *url.URL) string {
	host, err := normHost(u.Hostname())
	if err != nil {
		host = strings.ToLower(u.Hostname())
	}
	port := strings.TrimLeft(u.Port(), "0")
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	return strings.ToLower(u.Scheme) + "://" + host + ":" + port
}
