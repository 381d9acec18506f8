package gitstore

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
)

// Client is a worker's way to the store. Its HTTP client must be the
// worker's outbound guard (internal/outbound): every request goes
// through it.
type Client struct {
	// URL is the dispatcher's base URL ("http://dispatcher:8080").
	URL string
	// Credential is the workers' credential the dispatcher mints tree
	// tokens for (its git_store.worker_token).
	Credential string
	HTTP       *http.Client

	mu     sync.Mutex
	tokens map[uuid.UUID]cached
}

type cached struct {
	token   string
	renewAt time.Time
}

// TokenRequest is the body of POST /git/token: the tree and a task of it
// the worker runs.
type TokenRequest struct {
	Tree uuid.UUID `json:"tree"`
	Task uuid.UUID `json:"task"`
}

// TokenResponse is its answer.
type TokenResponse struct {
	Token     string    `json:"token"`
	ExpiresAt time.Time `json:"expires_at"`
}

// token returns a tree token for task's tree, minted by the dispatcher
// and kept in memory until half its life has passed.
func (c *Client) token(ctx context.Context, tree, task uuid.UUID) (string, error) {
	c.mu.Lock()
	if t, ok := c.tokens[tree]; ok && time.Now().Before(t.renewAt) {
		c.mu.Unlock()
		return t.token, nil
	}
	c.mu.Unlock()
	body, _ := json.Marshal(TokenRequest{Tree: tree, Task: task})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL+"/git/token", bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	req.Header.Set("Authorization", "Bearer "+c.Credential)
	req.Header.Set("Content-Type", "application/json")
	var out TokenResponse
	if err := c.do(req, func(r io.Reader) error { return json.NewDecoder(r).Decode(&out) }); err != nil {
		return "", fmt.Errorf("asking the dispatcher for a tree token: %w", err)
	}
	c.mu.Lock()
	if c.tokens == nil {
		c.tokens = map[uuid.UUID]cached{}
	}
	c.tokens[tree] = cached{token: out.Token, renewAt: time.Now().Add(time.Until(out.ExpiresAt) / 2)}
	c.mu.Unlock()
	return out.Token, nil
}

// request builds a request on tree's repository, authorized by its token.
func (c *Client) request(ctx context.Context, method string, tree, task uuid.UUID, op string, q url.Values, body io.Reader) (*http.Request, error) {
	tok, err := c.token(ctx, tree, task)
	if err != nil {
		return nil, err
	}
	u := c.URL + "/git/" + tree.String() + "/" + op
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	return req, nil
}

// Refs returns the store's refs of the tree (BaseRef, StateRef names) and
// their commits.
func (c *Client) Refs(ctx context.Context, tree, task uuid.UUID) (map[string]string, error) {
	req, err := c.request(ctx, http.MethodGet, tree, task, "refs", nil, nil)
	if err != nil {
		return nil, err
	}
	refs := map[string]string{}
	err = c.settle(tree, c.do(req, func(r io.Reader) error {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			if id, name, ok := strings.Cut(sc.Text(), " "); ok {
				refs[name] = id
			}
		}
		return sc.Err()
	}))
	if err != nil {
		return nil, fmt.Errorf("listing the fleet git store's refs: %w", err)
	}
	return refs, nil
}

// Push stores bundle, a git bundle of the one ref refs/agentfleet/out, as
// the tree's ref (BaseRef, StateRef).
func (c *Client) Push(ctx context.Context, tree, task uuid.UUID, ref string, bundle io.Reader) error {
	if err := CheckRef(ref); err != nil {
		return err
	}
	req, err := c.request(ctx, http.MethodPost, tree, task, "push", url.Values{"ref": {ref}}, bundle)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-git-bundle")
	if err := c.settle(tree, c.do(req, func(io.Reader) error { return nil })); err != nil {
		return fmt.Errorf("pushing %s to the fleet git store: %w", ref, err)
	}
	return nil
}

// Fetch writes to w a git bundle of commit want under the ref
// refs/agentfleet/out, thin against have when the store has it ("": a
// whole bundle).
func (c *Client) Fetch(ctx context.Context, tree, task uuid.UUID, want, have string, w io.Writer) error {
	q := url.Values{"want": {want}}
	if have != "" {
		q.Set("have", have)
	}
	req, err := c.request(ctx, http.MethodGet, tree, task, "fetch", q, nil)
	if err != nil {
		return err
	}
	if err := c.settle(tree, c.do(req, func(r io.Reader) error { _, err := io.Copy(w, r); return err })); err != nil {
		return fmt.Errorf("fetching %s from the fleet git store: %w", want, err)
	}
	return nil
}

// do sends req and hands a 2xx body to read; any other status is an
// error with the body's first line.
func (c *Client) do(req *http.Request, read func(io.Reader) error) error {
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode/100 != 2 {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return &statusError{code: resp.StatusCode, msg: resp.Status + ": " + strings.TrimSpace(string(msg))}
	}
	return read(resp.Body)
}

// statusError is a response that was not a success.
type statusError struct {
	code int
	msg  string
}

func (e *statusError) Error() string { return e.msg }

// settle forgets tree's token when the store refused it (a dispatcher
// with another key, an expiry sooner than said), so the next call asks
// for a new one, and returns err.
func (c *Client) settle(tree uuid.UUID, err error) error {
	var se *statusError
	if errors.As(err, &se) && se.code == http.StatusUnauthorized {
		c.mu.Lock()
		delete(c.tokens, tree)
		c.mu.Unlock()
	}
	return err
}
