package hooks_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentfleet/agentfleet/agent"
	"github.com/agentfleet/agentfleet/agent/hooks"
	"github.com/agentfleet/agentfleet/execenv"
)

func localEnv(t *testing.T) *execenv.Local {
	t.Helper()
	env, err := execenv.NewLocal(execenv.LocalConfig{WorkingDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Cleanup(context.Background()) })
	return env
}

var pre = agent.HookEvent{Point: agent.HookPreToolUse, SessionID: "s1", ToolName: "shell", CallID: "c1", Arguments: json.RawMessage(`{"command":"rm -rf /"}`)}

func TestShellHookBlocksWithStderrAsReason(t *testing.T) {
	r := hooks.New([]hooks.Config{{Event: agent.HookPreToolUse, Tool: "sh*", Type: hooks.Shell,
		Command: `grep -q 'rm -rf' && { echo "no recursive deletes" >&2; exit 2; }; exit 0`}}, hooks.Options{Env: localEnv(t)})
	res := r.RunHook(context.Background(), pre)
	if !res.Block || res.Reason != "no recursive deletes" || len(res.Warnings) > 0 {
		t.Fatalf("result = %+v", res)
	}
	ev := pre
	ev.Arguments = json.RawMessage(`{"command":"ls"}`)
	if res := r.RunHook(context.Background(), ev); res.Block {
		t.Fatalf("ls blocked: %+v", res)
	}
	ev.ToolName = "read_file"
	ev.Arguments = json.RawMessage(`{"command":"rm -rf /"}`)
	if res := r.RunHook(context.Background(), ev); res.Block {
		t.Fatalf("a hook filtered to sh* ran for read_file: %+v", res)
	}
}

func TestShellPostHookOutputIsAppended(t *testing.T) {
	env := localEnv(t)
	r := hooks.New([]hooks.Config{{Event: agent.HookPostToolUse, Type: hooks.Shell,
		Command: `echo "formatted: $(jq -r .tool_name 2>/dev/null || sed -n 's/.*"tool_name":"\([^"]*\)".*/\1/p')"`}}, hooks.Options{Env: env})
	res := r.RunHook(context.Background(), agent.HookEvent{Point: agent.HookPostToolUse, ToolName: "write_file", Output: "ok"})
	if res.Append != "formatted: write_file" || len(res.Warnings) > 0 {
		t.Fatalf("result = %+v", res)
	}
}

func TestShellHookTimeoutWarnsAndDoesNotBlock(t *testing.T) {
	r := hooks.New([]hooks.Config{{Event: agent.HookPreToolUse, Type: hooks.Shell, Command: "sleep 30", Timeout: 300 * time.Millisecond}},
		hooks.Options{Env: localEnv(t)})
	res := r.RunHook(context.Background(), pre)
	if res.Block || len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "timed out after 300ms") || !strings.Contains(res.Warnings[0], "did not block") {
		t.Fatalf("result = %+v", res)
	}
}

func TestFailingHookBlocksWhenAskedTo(t *testing.T) {
	r := hooks.New([]hooks.Config{{Event: agent.HookPreToolUse, Type: hooks.Shell, Command: "echo broken >&2; exit 7", BlockOnFailure: true}},
		hooks.Options{Env: localEnv(t)})
	res := r.RunHook(context.Background(), pre)
	if !res.Block || !strings.Contains(res.Reason, "exit status 7: broken") || len(res.Warnings) != 1 {
		t.Fatalf("result = %+v", res)
	}
}

func TestShellHookPrintingGarbageDoesNotBlock(t *testing.T) {
	r := hooks.New([]hooks.Config{{Event: agent.HookPreToolUse, Type: hooks.Shell, Command: `printf '\x00\x01{{not json'; exit 0`}},
		hooks.Options{Env: localEnv(t)})
	if res := r.RunHook(context.Background(), pre); res.Block || len(res.Warnings) > 0 {
		t.Fatalf("result = %+v", res)
	}
}

// receiver is a real HTTP hook endpoint recording the events it got.
type receiver struct {
	mu     sync.Mutex
	events []agent.HookEvent
	answer string
	delay  time.Duration
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var ev agent.HookEvent
	body, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(body, &ev); err != nil || r.Header.Get("Content-Type") != "application/json" {
		http.Error(w, "bad event", http.StatusBadRequest)
		return
	}
	rc.mu.Lock()
	rc.events = append(rc.events, ev)
	answer, delay := rc.answer, rc.delay
	rc.mu.Unlock()
	if delay > 0 {
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
	}
	_, _ = io.WriteString(w, answer)
}

func TestHTTPHook(t *testing.T) {
	rc := &receiver{answer: `{"decision":"block","reason":"policy says no"}`}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	allow, err := hooks.Allowlist([]string{srv.URL + "/"})
	if err != nil {
		t.Fatal(err)
	}
	cfg := hooks.Config{Event: agent.HookPreToolUse, Type: hooks.HTTP, URL: srv.URL + "/hook", Timeout: time.Second}
	if err := cfg.Validate("hooks[0]", allow); err != nil {
		t.Fatal(err)
	}
	r := hooks.New([]hooks.Config{cfg}, hooks.Options{Allow: allow, AllowPrivate: loopback})
	res := r.RunHook(context.Background(), pre)
	if !res.Block || res.Reason != "policy says no" {
		t.Fatalf("block answer: %+v", res)
	}
	rc.mu.Lock()
	if len(rc.events) != 1 || rc.events[0].ToolName != "shell" || rc.events[0].SessionID != "s1" {
		t.Fatalf("receiver got %+v", rc.events)
	}
	rc.answer = "<html>garbage</html>"
	rc.mu.Unlock()
	res = r.RunHook(context.Background(), pre)
	if res.Block || len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "not a JSON decision") {
		t.Fatalf("garbage answer: %+v", res)
	}
	rc.mu.Lock()
	rc.answer, rc.delay = "", 5*time.Second
	rc.mu.Unlock()
	res = r.RunHook(context.Background(), pre)
	if res.Block || len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "timed out after 1s") {
		t.Fatalf("slow receiver: %+v", res)
	}
}

func TestValidate(t *testing.T) {
	allow, err := hooks.Allowlist([]string{"https://hooks.example/"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		cfg  hooks.Config
		want string
	}{
		{hooks.Config{Event: "before", Type: hooks.Shell, Command: "x"}, `event "before" is unknown`},
		{hooks.Config{Event: agent.HookPreToolUse, Type: "exec", Command: "x"}, `type "exec" is unknown`},
		{hooks.Config{Event: agent.HookPreToolUse, Type: hooks.Shell}, "command is required"},
		{hooks.Config{Event: agent.HookPreToolUse, Type: hooks.HTTP, URL: "https://evil.example/x"}, "not on the worker's hook allowlist"},
		{hooks.Config{Event: agent.HookPreToolUse, Type: hooks.HTTP, URL: "https://hooks.example@169.254.169.254/"}, "not on the worker's hook allowlist"},
		{hooks.Config{Event: agent.HookPreToolUse, Type: hooks.HTTP, URL: "https://hooks.example.evil.net/"}, "not on the worker's hook allowlist"},
		{hooks.Config{Event: agent.HookPreToolUse, Type: hooks.HTTP, URL: "http://hooks.example/"}, "not on the worker's hook allowlist"},
		{hooks.Config{Event: agent.HookPreToolUse, Type: hooks.HTTP, URL: "https://hooks.example:8443/"}, "not on the worker's hook allowlist"},
		{hooks.Config{Event: agent.HookPreToolUse, Tool: "[", Type: hooks.Shell, Command: "x"}, "not a valid glob"},
		{hooks.Config{Event: agent.HookPreToolUse, Type: hooks.Shell, Command: "x", Timeout: time.Hour}, "timeout must be"},
	} {
		err := tc.cfg.Validate("hooks[2]", allow)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "hooks[2].") {
			t.Errorf("%+v: %v, want %q", tc.cfg, err, tc.want)
		}
	}
	for _, u := range []string{"https://hooks.example/fmt", "https://HOOKS.example./fmt"} {
		ok := hooks.Config{Event: agent.HookPostToolUse, Type: hooks.HTTP, URL: u}
		if err := ok.Validate("hooks[0]", allow); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := hooks.Allowlist([]string{"https://hooks.example@169.254.169.254/"}); err == nil || !strings.Contains(err.Error(), "hooks_http_allowlist[0]") {
		t.Fatalf("an allowlist entry with user info: %v, want an error naming it", err)
	}
}

// loopback lets the tests' receivers on 127.0.0.1 be reached.
var loopback = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}

// TestHTTPHookGuard: without allow-private a loopback receiver is not
// reached, and a redirect off the allowlist is not followed.
func TestHTTPHookGuard(t *testing.T) {
	rc := &receiver{}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	allow, err := hooks.Allowlist([]string{srv.URL + "/hook"})
	if err != nil {
		t.Fatal(err)
	}
	cfg := hooks.Config{Event: agent.HookPreToolUse, Type: hooks.HTTP, URL: srv.URL + "/hook", Timeout: 5 * time.Second}
	res := hooks.New([]hooks.Config{cfg}, hooks.Options{Allow: allow}).RunHook(context.Background(), pre)
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "loopback") {
		t.Fatalf("loopback receiver without allow-private: %+v", res)
	}
	rc.mu.Lock()
	n := len(rc.events)
	rc.mu.Unlock()
	if n != 0 {
		t.Fatalf("the receiver got %d events", n)
	}
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, srv.URL+"/elsewhere", http.StatusTemporaryRedirect)
	}))
	defer redirector.Close()
	allow, err = hooks.Allowlist([]string{redirector.URL, srv.URL + "/hook"})
	if err != nil {
		t.Fatal(err)
	}
	cfg.URL = redirector.URL + "/x"
	res = hooks.New([]hooks.Config{cfg}, hooks.Options{Allow: allow, AllowPrivate: loopback}).RunHook(context.Background(), pre)
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "not on the allowlist") {
		t.Fatalf("redirect off the allowlist: %+v", res)
	}
	rc.mu.Lock()
	n = len(rc.events)
	rc.mu.Unlock()
	if n != 0 {
		t.Fatalf("the receiver got %d events through the redirect", n)
	}
}
