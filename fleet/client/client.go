package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/api"
	"github.com/agentfleet/agentfleet/store"
)

// Client talks to a dispatcher's HTTP API (docs/api.md). It is safe for
// concurrent use.
type Client struct {
	base  *url.URL
	token string
	http  *http.Client
}

// New returns a client of the dispatcher at server
// ("http://host:8080"). token may be empty for a dispatcher without
// authentication; hc may be nil for a default client (no overall timeout,
// since event streams are long).
func New(server, token string, hc *http.Client) (*Client, error) {
	u, err := url.Parse(strings.TrimRight(server, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("client: server %q must be an http:// or https:// URL such as http://localhost:8080", server)
	}
	if hc == nil {
		hc = &http.Client{}
	}
	return &Client{base: u, token: token, http: hc}, nil
}

// APIError is an error response of the API.
type APIError struct {
	Status int
	api.ErrorDetail
	// RetryAfter is the answer's Retry-After (a 503 while the
	// dispatcher's store is away); 0 when it has none.
	RetryAfter time.Duration
}

func (e *APIError) Error() string {
	return fmt.Sprintf("dispatcher: %d %s: %s", e.Status, e.Code, e.Message)
}

// IsNotFound reports whether err is a 404 of the API.
func IsNotFound(err error) bool {
	var ae *APIError
	return errors.As(err, &ae) && ae.Status == http.StatusNotFound
}

// url is the address of path (escaped already: url.PathEscape of each
// value it carries, so that a label "team=a/b" or "*" arrives intact) with
// query q.
func (c *Client) url(path string, q url.Values) string {
	u := *c.base
	u.RawPath = c.base.EscapedPath() + path
	if p, err := url.PathUnescape(u.RawPath); err == nil {
		u.Path = p
	} else {
		u.Path, u.RawPath = c.base.Path+path, ""
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// do sends a request with a JSON body (when in is not nil) and decodes a
// JSON answer into out (when not nil).
func (c *Client) do(ctx context.Context, method, path string, q url.Values, in, out any) error {
	resp, err := c.send(ctx, method, path, q, in, nil)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	if out == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("dispatcher: decode the answer to %s %s: %w", method, path, err)
	}
	return nil
}

// readRetries bounds how often send repeats a read the dispatcher answered
// 503 with Retry-After (its store away); maxRetryAfter caps one wait.
const (
	readRetries   = 5
	maxRetryAfter = 30 * time.Second
)

// send sends a request and returns the response of a 2xx, else an
// *APIError. A GET answered 503 with Retry-After (the dispatcher's store is
// away) is sent again after that delay, up to readRetries times while ctx
// lasts; a write is not, as it may have been done.
func (c *Client) send(ctx context.Context, method, path string, q url.Values, in any, hdr http.Header) (*http.Response, error) {
	for attempt := 0; ; attempt++ {
		resp, err := c.sendOnce(ctx, method, path, q, in, hdr)
		var ae *APIError
		if method != http.MethodGet || attempt == readRetries || !errors.As(err, &ae) || ae.RetryAfter <= 0 {
			return resp, err
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(min(ae.RetryAfter, maxRetryAfter)):
		}
	}
}

func (c *Client) sendOnce(ctx context.Context, method, path string, q url.Values, in any, hdr http.Header) (*http.Response, error) {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return nil, fmt.Errorf("dispatcher: encode request: %w", err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.url(path, q), body)
	if err != nil {
		return nil, err
	}
	maps.Copy(req.Header, hdr)
	if in != nil || method == http.MethodPost || method == http.MethodPut || method == http.MethodPatch {
		req.Header.Set("Content-Type", "application/json") // the API refuses a mutating request without it
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("dispatcher at %s: %w", c.base, err)
	}
	if resp.StatusCode/100 == 2 {
		return resp, nil
	}
	defer func() { _ = resp.Body.Close() }()
	return nil, readAPIError(resp)
}

func readAPIError(resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	ae := &APIError{Status: resp.StatusCode}
	if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 {
		ae.RetryAfter = time.Duration(s) * time.Second
	}
	var eb api.ErrorBody
	if json.Unmarshal(b, &eb) == nil && eb.Error.Message != "" {
		ae.ErrorDetail = eb.Error
	} else {
		ae.Code = strings.ToLower(strings.ReplaceAll(http.StatusText(resp.StatusCode), " ", "_"))
		ae.Message = strings.TrimSpace(string(b))
	}
	return ae
}

// Submit submits one task.
func (c *Client) Submit(ctx context.Context, spec fleet.TaskSpec) (api.SubmitResponse, error) {
	var out api.SubmitResponse
	return out, c.do(ctx, http.MethodPost, "/v1/tasks", nil, spec, &out)
}

// SubmitBatch submits up to api.MaxBatch tasks, all or none.
func (c *Client) SubmitBatch(ctx context.Context, specs []fleet.TaskSpec) (api.BatchResponse, error) {
	var out api.BatchResponse
	return out, c.do(ctx, http.MethodPost, "/v1/tasks/batch", nil, api.BatchRequest{Tasks: specs}, &out)
}

// Get returns one task.
func (c *Client) Get(ctx context.Context, id uuid.UUID) (api.TaskView, error) {
	var out api.TaskView
	return out, c.do(ctx, http.MethodGet, "/v1/tasks/"+id.String(), nil, nil, &out)
}

// ListFilter selects tasks for List; zero fields do not filter.
type ListFilter struct {
	Tenant        string // one of the caller's tenants; "" for all of them
	States        []store.TaskState
	Root, Parent  uuid.UUID
	Queue         string
	Labels        map[string]string
	CreatedAfter  time.Time
	CreatedBefore time.Time
	// Query is a text search over prompts, final answers and failure
	// reasons (GET /v1/tasks?q=, docs/api.md).
	Query  string
	Limit  int
	Cursor string
}

func (f ListFilter) query() url.Values {
	q := url.Values{}
	for _, s := range f.States {
		q.Add("state", string(s))
	}
	if f.Root != uuid.Nil {
		q.Set("root", f.Root.String())
	}
	if f.Parent != uuid.Nil {
		q.Set("parent", f.Parent.String())
	}
	if f.Queue != "" {
		q.Set("queue", f.Queue)
	}
	if f.Tenant != "" {
		q.Set("tenant", f.Tenant)
	}
	for k, v := range f.Labels {
		q.Add("label", k+"="+v)
	}
	if !f.CreatedAfter.IsZero() {
		q.Set("created_after", f.CreatedAfter.Format(time.RFC3339Nano))
	}
	if !f.CreatedBefore.IsZero() {
		q.Set("created_before", f.CreatedBefore.Format(time.RFC3339Nano))
	}
	if f.Limit > 0 {
		q.Set("limit", fmt.Sprint(f.Limit))
	}
	if f.Cursor != "" {
		q.Set("cursor", f.Cursor)
	}
	if f.Query != "" {
		q.Set("q", f.Query)
	}
	return q
}

// List returns one page of tasks, newest first.
func (c *Client) List(ctx context.Context, f ListFilter) (api.TaskList, error) {
	var out api.TaskList
	return out, c.do(ctx, http.MethodGet, "/v1/tasks", f.query(), nil, &out)
}

// Tree returns the tree of the task's root.
func (c *Client) Tree(ctx context.Context, id uuid.UUID) (api.TaskTree, error) {
	var out api.TaskTree
	return out, c.do(ctx, http.MethodGet, "/v1/tasks/"+id.String()+"/tree", nil, nil, &out)
}

// Cancel cancels a task and its subtree.
func (c *Client) Cancel(ctx context.Context, id uuid.UUID, reason string) (api.CancelResponse, error) {
	var out api.CancelResponse
	return out, c.do(ctx, http.MethodPost, "/v1/tasks/"+id.String()+"/cancel", nil, api.CancelRequest{Reason: reason}, &out)
}

// Steer injects a message into the running session of a task.
func (c *Client) Steer(ctx context.Context, id uuid.UUID, message string) (api.ControlResponse, error) {
	var out api.ControlResponse
	return out, c.do(ctx, http.MethodPost, "/v1/tasks/"+id.String()+"/steer", nil, api.MessageRequest{Message: message}, &out)
}

// FollowUp queues the next input of the running session of a task.
func (c *Client) FollowUp(ctx context.Context, id uuid.UUID, message string) (api.ControlResponse, error) {
	var out api.ControlResponse
	return out, c.do(ctx, http.MethodPost, "/v1/tasks/"+id.String()+"/follow_up", nil, api.MessageRequest{Message: message}, &out)
}

// Configure changes the reasoning effort and/or model of a running session.
func (c *Client) Configure(ctx context.Context, id uuid.UUID, req api.ConfigureRequest) (api.ControlResponse, error) {
	var out api.ControlResponse
	return out, c.do(ctx, http.MethodPost, "/v1/tasks/"+id.String()+"/configure", nil, req, &out)
}

// Compact asks the running session of a task to compact its context
// before its next model call.
func (c *Client) Compact(ctx context.Context, id uuid.UUID) (api.ControlResponse, error) {
	var out api.ControlResponse
	return out, c.do(ctx, http.MethodPost, "/v1/tasks/"+id.String()+"/compact", nil, nil, &out)
}

// Sessions lists the sessions of a task.
func (c *Client) Sessions(ctx context.Context, id uuid.UUID) (api.SessionList, error) {
	var out api.SessionList
	return out, c.do(ctx, http.MethodGet, "/v1/tasks/"+id.String()+"/sessions", nil, nil, &out)
}

// Turns returns the turns of a session after seq after (0: from the first).
func (c *Client) Turns(ctx context.Context, session uuid.UUID, after int64) (api.TurnList, error) {
	var out api.TurnList
	q := url.Values{}
	if after > 0 {
		q.Set("after", fmt.Sprint(after))
	}
	return out, c.do(ctx, http.MethodGet, "/v1/sessions/"+session.String()+"/turns", q, nil, &out)
}

// ToolOutput returns the full output of one tool call.
func (c *Client) ToolOutput(ctx context.Context, session uuid.UUID, callID string) (api.ToolOutputView, error) {
	var out api.ToolOutputView
	return out, c.do(ctx, http.MethodGet, "/v1/sessions/"+session.String()+"/tool_outputs/"+url.PathEscape(callID), nil, nil, &out)
}

// Artifacts lists the artifacts of a task.
func (c *Client) Artifacts(ctx context.Context, id uuid.UUID) (api.ArtifactList, error) {
	var out api.ArtifactList
	return out, c.do(ctx, http.MethodGet, "/v1/tasks/"+id.String()+"/artifacts", nil, nil, &out)
}

// Rounds returns a task's rounds and its pull request's state.
func (c *Client) Rounds(ctx context.Context, id uuid.UUID) (api.RoundList, error) {
	var out api.RoundList
	return out, c.do(ctx, http.MethodGet, "/v1/tasks/"+id.String()+"/rounds", nil, nil, &out)
}

// Artifact returns the content of an artifact and its content type.
func (c *Client) Artifact(ctx context.Context, id uuid.UUID, kind, name string) ([]byte, string, error) {
	q := url.Values{}
	if name != "" {
		q.Set("name", name)
	}
	resp, err := c.send(ctx, http.MethodGet, "/v1/tasks/"+id.String()+"/artifacts/"+url.PathEscape(kind), q, nil, nil)
	if err != nil {
		return nil, "", err
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	return b, resp.Header.Get("Content-Type"), err
}

// Counts returns the number of tasks in each state.
func (c *Client) Counts(ctx context.Context) (map[store.TaskState]int64, error) {
	var out map[store.TaskState]int64
	return out, c.do(ctx, http.MethodGet, "/v1/counts", nil, nil, &out)
}

// Stats returns counts, queue backlogs and throughput.
func (c *Client) Stats(ctx context.Context) (api.Stats, error) {
	var out api.Stats
	return out, c.do(ctx, http.MethodGet, "/v1/stats", nil, nil, &out)
}

// CountsFiltered counts the tasks matching f (its queue, root, tenant and
// labels) by state.
func (c *Client) CountsFiltered(ctx context.Context, f ListFilter) (map[store.TaskState]int64, error) {
	q := url.Values{}
	if f.Root != uuid.Nil {
		q.Set("root", f.Root.String())
	}
	if f.Queue != "" {
		q.Set("queue", f.Queue)
	}
	if f.Tenant != "" {
		q.Set("tenant", f.Tenant)
	}
	for k, v := range f.Labels {
		q.Add("label", k+"="+v)
	}
	var out map[store.TaskState]int64
	return out, c.do(ctx, http.MethodGet, "/v1/counts", q, nil, &out)
}
