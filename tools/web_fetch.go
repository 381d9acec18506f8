package tools

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/agentfleet/agentfleet/internal/outbound"
)

//go:embed web_fetch.md
var webFetchDescription string

// WebFetchConfig enables and bounds the web_fetch tool. The zero value is a
// disabled tool: it is registered nowhere by default and refuses to run
// until Enabled is set.
type WebFetchConfig struct {
	// Enabled must be true for the tool to fetch anything.
	Enabled bool
	// AllowedHosts, when not empty, lists the only hosts that may be
	// fetched, redirects included: "host" (http and https on their
	// default ports), "host:port", "*.domain" (the names below domain;
	// ".domain" is read the same way) or a URL prefix; see
	// internal/outbound.ParseAllowlist.
	AllowedHosts []string
	// AllowPrivate are the internal addresses (loopback, private,
	// link-local, CGNAT, NAT64, ...) that may be fetched; every other one
	// is refused after resolution, so the tool cannot reach internal
	// services. nil allows none.
	AllowPrivate []netip.Prefix
	// MaxBytes bounds the body read (default 5 MiB).
	MaxBytes int64
	// Timeout bounds the whole request (default 30 s).
	Timeout time.Duration
	// UserAgent is sent with every request (default "agentfleet-web-fetch").
	UserAgent string
}

// WithDefaults returns c with zero fields set to their documented defaults.
func (c WebFetchConfig) WithDefaults() WebFetchConfig {
	if c.MaxBytes == 0 {
		c.MaxBytes = 5 << 20
	}
	if c.Timeout == 0 {
		c.Timeout = 30 * time.Second
	}
	if c.UserAgent == "" {
		c.UserAgent = "agentfleet-web-fetch"
	}
	return c
}

// Validate reports a field with an unusable value.
func (c WebFetchConfig) Validate() error {
	if c.MaxBytes < 0 {
		return fmt.Errorf("WebFetchConfig.MaxBytes must be >= 0, got %d", c.MaxBytes)
	}
	if c.Timeout < 0 {
		return fmt.Errorf("WebFetchConfig.Timeout must be >= 0, got %s", c.Timeout)
	}
	_, err := c.allowlist()
	return err
}

// allowlist parses AllowedHosts; none admits any http or https URL.
func (c WebFetchConfig) allowlist() (outbound.Allowlist, error) {
	if len(c.AllowedHosts) == 0 {
		return outbound.AnyURL(), nil
	}
	hosts := make([]string, len(c.AllowedHosts))
	for i, h := range c.AllowedHosts {
		if strings.HasPrefix(h, ".") {
			h = "*" + h
		}
		hosts[i] = h
	}
	return outbound.ParseAllowlist("WebFetchConfig.AllowedHosts", hosts)
}

// WebFetchParams are the arguments of the web_fetch tool.
type WebFetchParams struct {
	URL string `json:"url"`
}

const webFetchSchema = `{
  "type": "object",
  "properties": {
    "url": {"type": "string", "minLength": 1, "description": "The http or https URL to fetch."}
  },
  "required": ["url"],
  "additionalProperties": false
}`

// WebFetch returns the web_fetch tool configured by cfg. It runs on the
// worker (not through the execution environment).
func WebFetch(cfg WebFetchConfig) (Tool, error) {
	if err := cfg.Validate(); err != nil {
		return Tool{}, err
	}
	f := &fetcher{cfg: cfg.WithDefaults()}
	f.allow, _ = f.cfg.allowlist() // Validate parsed it
	f.client = outbound.Client(outbound.Policy{Allow: f.allow, AllowPrivate: f.cfg.AllowPrivate,
		Timeout: f.cfg.Timeout, DialTimeout: 10 * time.Second})
	return Typed(coreTool("web_fetch", webFetchDescription, webFetchSchema, false, NoPaths), f.run), nil
}

type fetcher struct {
	cfg    WebFetchConfig
	allow  outbound.Allowlist
	client *http.Client // through the outbound guard: every hop checked
}

func (f *fetcher) run(ctx context.Context, _ Call, p WebFetchParams) (Output, error) {
	if !f.cfg.Enabled {
		return Output{}, errors.New("web_fetch is disabled in this deployment; work from local files instead")
	}
	u, err := url.Parse(p.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return Output{}, fmt.Errorf("%q is not an http or https URL", p.URL)
	}
	if err := f.allow.Check(u); err != nil {
		return Output{}, fmt.Errorf("fetching %s is not allowed (%v); allowed hosts: %s", u.Redacted(), err, strings.Join(f.cfg.AllowedHosts, ", "))
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return Output{}, err
	}
	req.Header.Set("User-Agent", f.cfg.UserAgent)
	req.Header.Set("Accept", "text/html, text/plain, application/json;q=0.9, */*;q=0.5")
	resp, err := f.client.Do(req)
	if err != nil {
		return Output{}, fmt.Errorf("fetching %s failed: %w", p.URL, err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(io.LimitReader(resp.Body, f.cfg.MaxBytes+1))
	if err != nil {
		return Output{}, fmt.Errorf("reading %s failed: %w", p.URL, err)
	}
	cut := int64(len(body)) > f.cfg.MaxBytes
	if cut {
		body = body[:f.cfg.MaxBytes]
	}
	return f.render(p.URL, resp, body, cut), nil
}

func (f *fetcher) render(rawURL string, resp *http.Response, body []byte, cut bool) Output {
	media, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	var text string
	switch {
	case media == "text/html" || media == "application/xhtml+xml":
		text = HTMLToText(string(body))
	case strings.HasPrefix(media, "text/"), media == "application/json", media == "application/xml", media == "":
		text = strings.ToValidUTF8(string(body), "\uFFFD")
	default:
		return Output{Text: fmt.Sprintf("%s returned %s content (%s), which is not text.", rawURL, media, resp.Status), IsError: true}
	}
	head := fmt.Sprintf("URL: %s\nStatus: %s\n", rawURL, resp.Status)
	if cut {
		head += fmt.Sprintf("Note: the body was cut at %d bytes.\n", f.cfg.MaxBytes)
	}
	return Output{Text: head + "\n" + text, IsError: resp.StatusCode >= 400}
}
