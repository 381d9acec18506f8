package forge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/agentfleet/agentfleet/internal/outbound"
	"github.com/agentfleet/agentfleet/internal/tracing"
)

// Kinds of forge.
const (
	KindGitea   = "gitea"
	KindForgejo = "forgejo"
	KindGitHub  = "github"
	KindGitLab  = "gitlab"
)

// Kinds lists the kinds New accepts.
var Kinds = []string{KindGitea, KindForgejo, KindGitHub, KindGitLab}

// DefaultAPIURL returns the public API root of a forge kind, "" for those
// without one (Gitea and Forgejo are self-hosted).
func DefaultAPIURL(kind string) string {
	switch kind {
	case KindGitHub:
		return "https://api.github.com"
	case KindGitLab:
		return "https://gitlab.com/api/v4"
	}
	return ""
}

// Forge opens pull requests on one forge. Repo is "owner/name" (GitLab:
// the project's full path).
type Forge interface {
	// Find returns the open request whose head is branch; ok is false
	// when there is none.
	Find(ctx context.Context, repo, branch string) (r Request, ok bool, err error)
	// Open opens a request.
	Open(ctx context.Context, repo string, n NewRequest) (Request, error)
}

// NewRequest is a request to open.
type NewRequest struct {
	Head   string // the branch with the changes
	Base   string // the branch they are for
	Title  string
	Body   string
	Labels []string
	Draft  bool
}

// Request is an open pull or merge request.
type Request struct {
	Number int    // GitHub and Gitea: number; GitLab: iid
	URL    string // the page a person opens
}

// Client is the HTTP client of a forge: through the outbound guard
// (internal/outbound), with a 30 s timeout; allowPrivate are the internal
// addresses (a self-hosted forge on a private network) it may reach. A
// redirect to another origin carries neither Authorization nor
// Private-Token.
func Client(allowPrivate []netip.Prefix) *http.Client {
	return outbound.Client(outbound.Policy{Allow: outbound.AnyURL(), AllowPrivate: allowPrivate, Timeout: 30 * time.Second})
}

// New returns the adapter for kind at apiURL ("" = DefaultAPIURL) with
// token. client nil means Client(nil): public addresses only.
func New(kind, apiURL, token string, client *http.Client) (Forge, error) {
	if apiURL == "" {
		apiURL = DefaultAPIURL(kind)
	}
	if apiURL == "" {
		return nil, fmt.Errorf("forge %q needs an api_url (such as https://forge.example/api/v1)", kind)
	}
	if client == nil {
		client = Client(nil)
	}
	c := &rest{base: strings.TrimSuffix(apiURL, "/"), client: client, kind: kind}
	switch kind {
	case KindGitea, KindForgejo:
		c.header = http.Header{"Authorization": {"token " + token}}
		return &gitea{c}, nil
	case KindGitHub:
		c.header = http.Header{"Authorization": {"Bearer " + token}, "Accept": {"application/vnd.github+json"},
			"X-Github-Api-Version": {"2022-11-28"}}
		return &github{c}, nil
	case KindGitLab:
		c.header = http.Header{"Private-Token": {token}}
		return &gitlab{c}, nil
	}
	return nil, fmt.Errorf("forge kind %q is unknown, want one of %s", kind, strings.Join(Kinds, ", "))
}

// Error is a forge's refusal: its HTTP status and its message.
type Error struct {
	Kind    string // the forge kind
	Method  string
	Path    string
	Status  int
	Message string
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s: %s %s: %d %s: %s", e.Kind, e.Method, e.Path, e.Status, http.StatusText(e.Status), e.Message)
}

// StatusOf returns the HTTP status of a forge error, 0 for other errors.
func StatusOf(err error) int {
	if fe, ok := errors.AsType[*Error](err); ok {
		return fe.Status
	}
	return 0
}

// rest is the HTTP client the adapters share.
type rest struct {
	kind   string
	base   string
	client *http.Client
	header http.Header
}

// do sends a JSON request and decodes a 2xx answer into out (when not nil).
func (c *rest) do(ctx context.Context, method, path string, in, out any) (err error) {
	ctx, span := c.startSpan(ctx, method, path)
	defer func() { tracing.Fail(span, err); span.End() }()
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return err
	}
	maps.Copy(req.Header, c.header)
	req.Header.Set("User-Agent", "agentfleet")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return fmt.Errorf("%s: %s %s: %w", c.kind, method, pathOnly(path), err)
	}
	defer func() { _ = resp.Body.Close() }()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return fmt.Errorf("%s: %s %s: reading the answer: %w", c.kind, method, pathOnly(path), err)
	}
	if resp.StatusCode/100 != 2 {
		return &Error{Kind: c.kind, Method: method, Path: pathOnly(path), Status: resp.StatusCode, Message: errorMessage(raw)}
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("%s: %s %s: the answer is not the JSON expected: %w", c.kind, method, pathOnly(path), err)
	}
	return nil
}

func pathOnly(p string) string {
	if before, _, ok := strings.Cut(p, "?"); ok {
		return before
	}
	return p
}

// errorMessage reads the message of a forge's error body: GitHub's and
// Gitea's {"message", "errors"}, GitLab's {"message"} (a string, a list or
// an object of lists) or {"error"}; otherwise the body's start.
func errorMessage(raw []byte) string {
	var e struct {
		Message json.RawMessage   `json:"message"`
		Error   string            `json:"error"`
		Errors  []json.RawMessage `json:"errors"`
	}
	if json.Unmarshal(raw, &e) != nil {
		return strings.TrimSpace(string(raw[:min(len(raw), 300)]))
	}
	var parts []string
	var s string
	if json.Unmarshal(e.Message, &s) == nil {
		parts = append(parts, s)
	} else if len(e.Message) > 0 {
		parts = append(parts, string(e.Message))
	}
	if e.Error != "" {
		parts = append(parts, e.Error)
	}
	for _, item := range e.Errors {
		var detail struct {
			Message string `json:"message"`
			Code    string `json:"code"`
			Field   string `json:"field"`
		}
		switch {
		case json.Unmarshal(item, &detail) == nil && detail.Message != "":
			parts = append(parts, detail.Message)
		case detail.Code != "":
			parts = append(parts, detail.Field+" "+detail.Code)
		default:
			parts = append(parts, string(item))
		}
	}
	return strings.Join(parts, "; ")
}

// splitRepo splits "owner/name" into its escaped path segments.
func splitRepo(repo string) (string, error) {
	owner, name, ok := strings.Cut(repo, "/")
	if !ok || owner == "" || name == "" || strings.Contains(name, "/") {
		return "", fmt.Errorf("repository %q must be \"owner/name\"", repo)
	}
	return pathEscape(owner) + "/" + pathEscape(name), nil
}

func pathEscape(s string) string { return url.PathEscape(s) }
