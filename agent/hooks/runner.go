package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"strings"

	"github.com/agentfleet/agentfleet/agent"
	"github.com/agentfleet/agentfleet/execenv"
	"github.com/agentfleet/agentfleet/internal/outbound"
)

// Options are what a Runner needs besides its hooks.
type Options struct {
	// Env runs shell hooks: the session's environment, so they run in the
	// task's workspace under the same confinement as its commands.
	Env execenv.Environment
	// Allow is the operator's allowlist (see Allowlist), checked again
	// before each POST and on every redirect; the zero value allows none.
	Allow outbound.Allowlist
	// AllowPrivate are the internal addresses http hooks may reach (the
	// operator's outbound_allow_private); nil allows none.
	AllowPrivate []netip.Prefix
}

// Runner runs a list of hooks; it implements agent.Hook. It is safe for
// concurrent use.
type Runner struct {
	hooks  []Config
	opts   Options
	client *http.Client // through the outbound guard
}

var _ agent.Hook = (*Runner)(nil)

// New returns a Runner of hooks (their defaults applied), in order.
func New(hooks []Config, opts Options) *Runner {
	r := &Runner{opts: opts}
	for _, h := range hooks {
		r.hooks = append(r.hooks, h.WithDefaults())
	}
	r.client = outbound.Client(outbound.Policy{Allow: opts.Allow, AllowPrivate: opts.AllowPrivate})
	return r
}

// outcome is one hook's run.
type outcome struct {
	block   bool
	reason  string
	output  string // post_tool_use: text to append
	failure string // why the hook failed, for a WARNING
}

// RunHook runs the hooks that match ev, in order, and stops at the first
// that blocks a pre_tool_use call.
func (r *Runner) RunHook(ctx context.Context, ev agent.HookEvent) agent.HookResult {
	var res agent.HookResult
	if len(ev.Output) > maxEventOutput {
		ev.Output = ev.Output[:maxEventOutput] + "\n[... cut for the hook ...]"
	}
	body, err := json.Marshal(ev)
	if err != nil {
		return agent.HookResult{Warnings: []string{"hooks: encoding the event: " + err.Error()}}
	}
	var appends []string
	for _, h := range r.hooks {
		if !h.matches(ev) {
			continue
		}
		o := r.runOne(ctx, h, ev, body)
		if o.failure != "" {
			o = failed(h, ev, o)
			res.Warnings = append(res.Warnings, o.failure)
		}
		if o.output != "" && ev.Point == agent.HookPostToolUse {
			appends = append(appends, o.output)
		}
		if o.block && ev.Point == agent.HookPreToolUse {
			res.Block, res.Reason = true, o.reason
			break
		}
	}
	res.Append = strings.Join(appends, "\n")
	return res
}

// failed applies the failure policy: a warning always, a block only when
// the hook asks for it at pre_tool_use.
func failed(h Config, ev agent.HookEvent, o outcome) outcome {
	if h.BlockOnFailure && ev.Point == agent.HookPreToolUse {
		o.block, o.reason = true, "the "+h.describe()+" failed and is set to block on failure: "+o.failure
		o.failure = h.describe() + " failed, so the call was blocked: " + o.failure
		return o
	}
	o.block = false
	o.failure = h.describe() + " failed and did not block: " + o.failure
	return o
}

func (r *Runner) runOne(ctx context.Context, h Config, ev agent.HookEvent, body []byte) outcome {
	ctx, cancel := context.WithTimeout(ctx, h.Timeout)
	defer cancel()
	if h.Type == HTTP {
		return r.runHTTP(ctx, h, body)
	}
	return r.runShell(ctx, h, ev, body)
}

// runShell runs the command with the event on standard input. Exit status
// 2 at pre_tool_use blocks, with standard error as the reason; at
// post_tool_use what the command printed is appended to the result; any
// other non-zero status is a failure.
func (r *Runner) runShell(ctx context.Context, h Config, ev agent.HookEvent, body []byte) outcome {
	if r.opts.Env == nil {
		return outcome{failure: "no environment to run shell hooks in"}
	}
	cmd := "printf '%s' \"$AGENTFLEET_HOOK_EVENT\" | (\n" + h.Command + "\n)"
	res, err := r.opts.Env.Exec(ctx, execenv.ExecRequest{Command: cmd, Timeout: h.Timeout, Env: map[string]string{
		"AGENTFLEET_HOOK_EVENT": string(body), "AGENTFLEET_HOOK": string(ev.Point), "AGENTFLEET_TOOL_NAME": ev.ToolName,
	}})
	switch {
	case err != nil:
		return outcome{failure: err.Error()}
	case res.TimedOut, res.Canceled && ctx.Err() == context.DeadlineExceeded:
		return outcome{failure: fmt.Sprintf("timed out after %s", h.Timeout)}
	case res.Canceled:
		return outcome{failure: "cancelled"}
	case res.ExitCode == 2 && ev.Point == agent.HookPreToolUse:
		return outcome{block: true, reason: bounded(strings.TrimSpace(res.Stderr))}
	case res.ExitCode != 0:
		return outcome{failure: fmt.Sprintf("exit status %d: %s", res.ExitCode, bounded(strings.TrimSpace(res.Stderr+"\n"+res.Stdout)))}
	}
	return outcome{output: bounded(strings.TrimSpace(res.Stdout + "\n" + res.Stderr))}
}

// decision is an http hook's answer.
type decision struct {
	Decision string `json:"decision"`
	Reason   string `json:"reason"`
	Output   string `json:"output"`
}

// runHTTP POSTs the event. A 2xx answer may be empty, or a JSON object
// whose decision "block" blocks a pre_tool_use call with its reason and
// whose output is appended at post_tool_use.
func (r *Runner) runHTTP(ctx context.Context, h Config, body []byte) outcome {
	if !r.opts.Allow.Admits(h.URL) {
		return outcome{failure: "the URL is not on the worker's hook allowlist (hooks_http_allowlist)"}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.URL, bytes.NewReader(body))
	if err != nil {
		return outcome{failure: err.Error()}
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := r.client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return outcome{failure: fmt.Sprintf("timed out after %s", h.Timeout)}
		}
		return outcome{failure: err.Error()}
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return outcome{failure: "reading the answer: " + err.Error()}
	}
	if resp.StatusCode/100 != 2 {
		return outcome{failure: fmt.Sprintf("answered %s: %s", resp.Status, bounded(string(data)))}
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return outcome{}
	}
	var d decision
	if err := json.Unmarshal(data, &d); err != nil {
		return outcome{failure: fmt.Sprintf("answered something that is not a JSON decision (%v): %s", err, bounded(string(data)))}
	}
	switch d.Decision {
	case "", "allow", "approve":
		return outcome{output: bounded(d.Output)}
	case "block":
		return outcome{block: true, reason: bounded(d.Reason)}
	}
	return outcome{failure: fmt.Sprintf("answered the unknown decision %q (want block or allow)", d.Decision)}
}

// bounded cuts s to MaxAppend bytes.
func bounded(s string) string {
	if len(s) <= MaxAppend {
		return s
	}
	return s[:MaxAppend] + "\n[... cut ...]"
}
