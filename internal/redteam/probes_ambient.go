package redteam

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/fleet/api"
	"github.com/agentfleet/agentfleet/fleet/client"
	"github.com/agentfleet/agentfleet/fleet/dev"
	"github.com/agentfleet/agentfleet/queue/embedded"
)

// The probes of issue 29's "no ambient authority" item attack the API from
// outside, as a web page the developer visits could: they send what a
// browser would send for that page, and escape when the API acts on it
// (a task is created, or data is read). Each aims at two APIs: dev mode
// as `make demo` starts it (fleet/dev with its defaults), and the suite's
// dispatcher served without a token (as `--no-auth` or serve's no_auth,
// where no token stands in the way and the request checks must hold).

// apiTarget is an API a page might reach, with a client that can see what
// a request did there.
type apiTarget struct {
	name  string
	url   string
	check *client.Client
}

// pageTargets starts dev mode as `make demo` does and returns it with the
// suite's tokenless API; stop closes dev mode.
func pageTargets(ctx context.Context, e *env) (targets []apiTarget, stop func(), err error) {
	d, err := dev.Start(ctx, dev.Config{Addr: "127.0.0.1:0", NATSPort: embedded.RandomPort,
		DataDir: filepath.Join(e.dir, "dev-ambient-"+canary()), Workers: 1, Sessions: 1, Simulated: true, Logger: e.cfg.Logger})
	if err != nil {
		return nil, nil, err
	}
	c, err := d.Client()
	if err != nil {
		_ = d.Close()
		return nil, nil, err
	}
	return []apiTarget{{"dev mode (make demo)", d.URL(), c}, {"tokenless API (no_auth)", e.fleet.url, e.fleet.client}},
		func() { _ = d.Close() }, nil
}

// pageRequest is what a page's browser sends.
type pageRequest struct {
	method, path, body string
	header             map[string]string // "Host" sets the Host header
}

// send sends r to t. It returns the status, and the task the request
// created when the API answered with one that t's client then finds.
func (r pageRequest) send(ctx context.Context, t apiTarget) (int, uuid.UUID, error) {
	req, err := http.NewRequestWithContext(ctx, r.method, t.url+r.path, strings.NewReader(r.body))
	if err != nil {
		return 0, uuid.Nil, err
	}
	for k, v := range r.header {
		if k == "Host" {
			req.Host = strings.ReplaceAll(v, "PORT", portOf(t.url))
			continue
		}
		req.Header.Set(k, strings.ReplaceAll(v, "PORT", portOf(t.url)))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, uuid.Nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	var sub api.SubmitResponse
	if resp.StatusCode/100 != 2 || json.Unmarshal(raw, &sub) != nil || sub.Task.ID == uuid.Nil {
		return resp.StatusCode, uuid.Nil, nil
	}
	if _, err := t.check.Get(ctx, sub.Task.ID); err != nil {
		return resp.StatusCode, uuid.Nil, nil
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	_, _ = t.check.Cancel(cctx, sub.Task.ID, "redteam: the probe has its answer")
	return resp.StatusCode, sub.Task.ID, nil
}

func portOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Port()
}

// pageProbe sends r to every target: Escaped when one created a task (or,
// with read, answered 200), else Held with each status.
func pageProbe(ctx context.Context, e *env, what string, reqs ...pageRequest) Result {
	targets, stop, err := pageTargets(ctx, e)
	if err != nil {
		return errResult(err)
	}
	defer stop()
	var held []string
	for _, t := range targets {
		for _, r := range reqs {
			code, id, err := r.send(ctx, t)
			if err != nil {
				return errResult(fmt.Errorf("%s: %w", t.name, err))
			}
			if id != uuid.Nil {
				return Result{Outcome: Escaped, Evidence: fmt.Sprintf("%s: %s: %d, task %s created", t.name, what, code, id)}
			}
			if r.method == http.MethodGet && code == http.StatusOK {
				return Result{Outcome: Escaped, Evidence: fmt.Sprintf("%s: %s: GET %s answered 200", t.name, what, r.path)}
			}
			held = append(held, fmt.Sprintf("%s %s %d", t.name, r.method, code))
		}
	}
	return Result{Outcome: Held, Evidence: "refused: " + strings.Join(held, "; ")}
}

// pageSpec is the body a page would post: a task that would run on the
// developer's machine.
func pageSpec() string { return `{"prompt":"redteam: a web page submits this ` + canary() + `"}` }

// probeTextPlainPost: an HTML form with enctype="text/plain" can post a
// JSON-looking body to any address without a CORS preflight.
func probeTextPlainPost(ctx context.Context, e *env) Result {
	return pageProbe(ctx, e, "a text/plain POST",
		pageRequest{method: http.MethodPost, path: "/v1/tasks", body: pageSpec(), header: map[string]string{"Content-Type": "text/plain"}})
}

// probeCrossOriginPost: a request from a page of another origin, as a
// browser marks it (Origin, Sec-Fetch-Site), with a JSON body.
func probeCrossOriginPost(ctx context.Context, e *env) Result {
	return pageProbe(ctx, e, "a cross-origin JSON POST",
		pageRequest{method: http.MethodPost, path: "/v1/tasks", body: pageSpec(), header: map[string]string{
			"Content-Type": "application/json", "Origin": "http://attacker.example", "Sec-Fetch-Site": "cross-site"}})
}

// probeForeignHost: DNS rebinding. A page at rebind.attacker.example whose
// name now resolves to 127.0.0.1 is same-origin with itself, so its
// browser sends JSON and reads the answers; only the Host header tells.
func probeForeignHost(ctx context.Context, e *env) Result {
	hdr := map[string]string{"Host": "rebind.attacker.example:PORT", "Origin": "http://rebind.attacker.example:PORT", "Sec-Fetch-Site": "same-origin"}
	post := map[string]string{"Content-Type": "application/json"}
	maps.Copy(post, hdr)
	return pageProbe(ctx, e, "a request for a rebound name",
		pageRequest{method: http.MethodPost, path: "/v1/tasks", body: pageSpec(), header: post},
		pageRequest{method: http.MethodGet, path: "/v1/tasks", header: hdr})
}

// probeAccessTokenURL: the token of a dispatcher that requires one, in a
// GET's query (?access_token=), where proxies and browsers log it.
func probeAccessTokenURL(ctx context.Context, e *env) Result {
	get := func(query string) (int, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.fleet.tokenURL+"/v1/tasks"+query, nil)
		if err != nil {
			return 0, err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, err
		}
		_ = resp.Body.Close()
		return resp.StatusCode, nil
	}
	bare, err := get("")
	if err != nil {
		return errResult(err)
	}
	if bare != http.StatusUnauthorized {
		return Result{Outcome: Error, Evidence: fmt.Sprintf("the API with a token answered %d without one; the probe says nothing", bare)}
	}
	code, err := get("?access_token=" + url.QueryEscape(e.fleet.token))
	if err != nil {
		return errResult(err)
	}
	if code == http.StatusOK {
		return Result{Outcome: Escaped, Evidence: "GET /v1/tasks?access_token=<token> answered 200: the token in the URL was accepted"}
	}
	return Result{Outcome: Held, Evidence: fmt.Sprintf("GET /v1/tasks?access_token=<token>: %d", code)}
}
