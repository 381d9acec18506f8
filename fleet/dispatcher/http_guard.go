package dispatcher

import (
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"

	"github.com/agentfleet/agentfleet/fleet/api"
)

// Requests a browser could send without the user meaning to (issue 29,
// "no ambient authority"): a page on another site posting a form, a
// fetch from another origin, or a page whose name was rebound to the
// dispatcher's address (DNS rebinding). A bearer token in a header already
// stops all three where one is required, since a browser never attaches
// it by itself; these checks hold where none is (dev mode's --no-auth,
// serve's no_auth) and are kept where one is, at no cost to programs.
//
// Decisions where the issue is silent:
//   - Content-Type: every POST, PUT and PATCH under /v1 must say
//     application/json (parameters allowed), whatever its body; a DELETE
//     needs none (a browser cannot send one to another origin without a
//     CORS preflight, which this API never answers).
//   - Origin and Sec-Fetch-Site are checked on every /v1 request, reads
//     included: Sec-Fetch-Site must be absent, same-origin or none (a page
//     on another port of localhost is "same-site", and refused), and an
//     Origin must name the request's own Host or an allowed_hosts name.
//     Programs (curl, fleet/client) send neither and pass.
//   - Host is checked on every request the handler serves when the API has
//     no token, and also with one when allowed_hosts is set. Allowed:
//     localhost, loopback addresses, the listen address's host, any IP
//     literal when the listen address is a wildcard (rebinding needs a
//     name), and the operator's allowed_hosts ("*.example.com" admits the
//     subdomains). Refused with 421 Misdirected Request.

// requestGuard holds what the checks allow.
type requestGuard struct {
	checkHost bool
	anyIP     bool            // the listen address is a wildcard
	listenIP  netip.Addr      // the listen address's IP, if it is one
	names     map[string]bool // lower case, no trailing dot
	suffixes  []string        // ".example.com" of "*.example.com"
	operator  map[string]bool // the allowed_hosts names only (for Origin)
}

func newRequestGuard(opts APIOptions) *requestGuard {
	g := &requestGuard{names: map[string]bool{"localhost": true}, operator: map[string]bool{},
		checkHost: opts.Token == "" || len(opts.AllowedHosts) > 0}
	host := opts.ListenAddr
	if h, _, err := net.SplitHostPort(opts.ListenAddr); err == nil {
		host = h
	}
	switch ip, err := netip.ParseAddr(host); {
	case host == "" && opts.ListenAddr != "":
		g.anyIP = true
	case err == nil && ip.IsUnspecified():
		g.anyIP = true
	case err == nil:
		g.listenIP = ip.Unmap()
	case host != "":
		g.names[normHost(host)] = true
	}
	for _, h := range opts.AllowedHosts {
		h = normHost(h)
		if rest, ok := strings.CutPrefix(h, "*."); ok {
			g.suffixes = append(g.suffixes, "."+rest)
			continue
		}
		g.names[h], g.operator[h] = true, true
	}
	return g
}

func normHost(h string) string {
	return strings.TrimSuffix(strings.ToLower(strings.TrimSpace(h)), ".")
}

// hostAllowed reports whether hostport (a Host header) names this API.
func (g *requestGuard) hostAllowed(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = normHost(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"))
	if ip, err := netip.ParseAddr(host); err == nil {
		ip = ip.Unmap()
		return ip.IsLoopback() || g.anyIP || ip == g.listenIP
	}
	if g.names[host] {
		return true
	}
	for _, s := range g.suffixes {
		if strings.HasSuffix(host, s) {
			return true
		}
	}
	return false
}

// crossSite returns why r comes from a page of another origin, or "".
func (g *requestGuard) crossSite(r *http.Request) string {
	switch s := r.Header.Get("Sec-Fetch-Site"); s {
	case "", "same-origin", "none":
	default:
		return "the browser says this request comes from another site (Sec-Fetch-Site: " + s + ")"
	}
	o := r.Header.Get("Origin")
	if o == "" {
		return ""
	}
	u, err := url.Parse(o)
	if err != nil || u.Host == "" {
		return "the request's Origin " + quote(o) + " is not this API's"
	}
	if strings.EqualFold(u.Host, r.Host) || g.operator[normHost(u.Hostname())] {
		return ""
	}
	return "the request's Origin " + quote(o) + " is not this API's (" + r.Host + ")"
}

func quote(s string) string {
	if len(s) > 100 {
		s = s[:100] + "..."
	}
	return `"` + s + `"`
}

// guardHost refuses a request whose Host is not an allowed name.
func (a *handlers) guardHost(next http.Handler) http.Handler {
	if !a.guard.checkHost {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !a.guard.hostAllowed(r.Host) {
			writeErr(w, http.StatusMisdirectedRequest, api.ErrorDetail{Code: api.CodeForbidden, Field: "Host",
				Message: "the Host header " + quote(r.Host) + " is not a name of this dispatcher (a DNS rebinding page would send one): " +
					"use localhost or an address, or add the name to allowed_hosts (AGENTFLEET_ALLOWED_HOSTS)"})
			return
		}
		next.ServeHTTP(w, r)
	})
}

// guardOrigin refuses a /v1 request from a page of another origin.
func (a *handlers) guardOrigin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if why := a.guard.crossSite(r); why != "" {
			writeErr(w, http.StatusForbidden, api.ErrorDetail{Code: api.CodeForbidden, Field: "Origin",
				Message: why + ": the API serves only its own dashboard and programs (which send no Origin); " +
					"if a proxy changes the Host, add the public name to allowed_hosts"})
			return
		}
		next.ServeHTTP(w, r)
	})
}

// requireJSON refuses a POST, PUT or PATCH whose Content-Type is not
// application/json: a form of another site can send text/plain or
// form-encoded bodies without asking, never JSON.
func requireJSON(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodPost, http.MethodPut, http.MethodPatch:
			ct := r.Header.Get("Content-Type")
			if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
				writeErr(w, http.StatusUnsupportedMediaType, api.ErrorDetail{Code: api.CodeUnsupportedMediaType, Field: "Content-Type",
					Message: "a " + r.Method + " must send 'Content-Type: application/json', got " + quote(ct) +
						" (with curl: -H 'Content-Type: application/json'; an empty JSON body is {})"})
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}
