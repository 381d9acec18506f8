package mcp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentfleet/agentfleet/execenv"
	"github.com/agentfleet/agentfleet/internal/testenv"
	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/tools"
	"github.com/agentfleet/agentfleet/tools/mcp"
	"github.com/agentfleet/agentfleet/tools/mcp/mcptest"
)

// bundle is one test's environment and registry.
type bundle struct {
	env execenv.Environment
	reg *tools.Registry
}

func setup(t *testing.T) *bundle {
	t.Helper()
	env, err := execenv.NewLocal(execenv.LocalConfig{WorkingDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Cleanup(context.Background()) })
	return &bundle{env: env, reg: tools.NewRegistry()}
}

// start starts cfgs and registers their tools; it fails on a start error.
func (b *bundle) start(t *testing.T, cfgs ...mcp.ServerConfig) *mcp.Client {
	t.Helper()
	c, errs := mcp.Start(context.Background(), cfgs, mcp.Options{Env: b.env})
	t.Cleanup(func() { _ = c.Close() })
	for _, e := range errs {
		t.Fatalf("start: %v", e)
	}
	c.Register(b.reg)
	return c
}

// call runs one call through the registry's pipeline.
func (b *bundle) call(name, args string) tools.Result {
	return b.reg.Execute(context.Background(), llm.ToolCall{ID: "c1", Name: name, Arguments: json.RawMessage(args)}, b.env, tools.ExecOptions{})
}

// selfServer runs this test binary as a stdio MCP server.
func selfServer(t *testing.T, name string) mcp.ServerConfig {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return mcp.ServerConfig{Name: name, Command: exe, Env: map[string]string{envServe: "1"}, StartTimeout: 20 * time.Second}
}

func TestEverythingServerOverStdio(t *testing.T) {
	b := setup(t)
	b.start(t, mcptest.NPX(t, "everything", mcptest.Everything, "stdio"))
	if _, ok := b.reg.Get("mcp__everything__echo"); !ok {
		t.Fatalf("no mcp__everything__echo among %v", b.reg.Names())
	}
	res := b.call("mcp__everything__echo", `{"message":"hello fleet"}`)
	if res.IsError || !strings.Contains(res.Content, "hello fleet") {
		t.Fatalf("echo = %+v", res)
	}
	// The schema is the server's: a missing required argument is caught
	// before the call, by the pipeline.
	res = b.call("mcp__everything__echo", `{}`)
	if !res.IsError || !strings.Contains(res.Content, "message") {
		t.Fatalf("echo without message = %+v, want a validation error naming message", res)
	}
	res = b.call(mcp.ListResourcesTool, `{"server":"everything"}`)
	if res.IsError || !strings.Contains(res.Content, "demo://") {
		t.Fatalf("list resources = %.500s", res.Content)
	}
	uri := firstURI(t, res.Content)
	res = b.call(mcp.ReadResourceTool, `{"server":"everything","uri":"`+uri+`"}`)
	if res.IsError || res.Content == "" {
		t.Fatalf("read %s = %+v", uri, res)
	}
}

// firstURI picks the first URI of a mcp_list_resources listing.
func firstURI(t *testing.T, listing string) string {
	for _, line := range strings.Split(listing, "\n")[1:] {
		if f := strings.Split(line, "\t"); len(f) >= 2 && strings.Contains(f[1], "://") {
			return f[1]
		}
	}
	t.Fatalf("no URI in %q", listing)
	return ""
}

func TestFilesystemServerOverStdio(t *testing.T) {
	b := setup(t)
	if err := os.WriteFile(filepath.Join(b.env.WorkingDir(), "notes.txt"), []byte("fleet notes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	b.start(t, mcptest.NPX(t, "fs", mcptest.Filesystem, b.env.WorkingDir()))
	res := b.call("mcp__fs__read_text_file", `{"path":"`+filepath.Join(b.env.WorkingDir(), "notes.txt")+`"}`)
	if res.IsError || !strings.Contains(res.Content, "fleet notes") {
		t.Fatalf("read_text_file = %+v (tools: %v)", res, b.reg.Names())
	}
	// The server's own access rule answers a path outside its directory.
	res = b.call("mcp__fs__read_text_file", `{"path":"/etc/hostname"}`)
	if !res.IsError {
		t.Fatalf("read outside the allowed directory = %+v, want an error", res)
	}
}

func TestHTTPServerWithSecretHeader(t *testing.T) {
	var auth atomic.Value
	srv := testServer()
	h := sdk.NewStreamableHTTPHandler(func(r *http.Request) *sdk.Server {
		auth.Store(r.Header.Get("Authorization"))
		return srv
	}, nil)
	ts := httptest.NewServer(h)
	defer ts.Close()
	b := setup(t)
	c, errs := mcp.Start(context.Background(), []mcp.ServerConfig{{Name: "remote", URL: ts.URL,
		Headers: map[string]string{"Authorization": "Bearer ${secret:REMOTE_TOKEN}"}}},
		mcp.Options{Env: b.env, Secrets: mcp.Secrets{Values: map[string]string{"REMOTE_TOKEN": "s3cret"}}, AllowPrivate: loopback})
	defer func() { _ = c.Close() }()
	if len(errs) > 0 {
		t.Fatal(errs[0])
	}
	c.Register(b.reg)
	if got, _ := auth.Load().(string); got != "Bearer s3cret" {
		t.Fatalf("Authorization = %q, want the resolved secret", got)
	}
	res := b.call("mcp__remote__echo", `{"text":"over http"}`)
	if res.IsError || res.Content != "echo: over http" {
		t.Fatalf("echo = %+v", res)
	}
	// tools/list_changed: a tool the server adds reaches the registry.
	sdk.AddTool(srv, &sdk.Tool{Name: "late", Description: "Added later."}, func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "late"}}}, nil, nil
	})
	testenv.Eventually(t, 10*time.Second, "mcp__remote__late registered", func() bool {
		_, ok := b.reg.Get("mcp__remote__late")
		return ok
	})
	srv.RemoveTools("echo")
	testenv.Eventually(t, 10*time.Second, "mcp__remote__echo unregistered", func() bool {
		_, ok := b.reg.Get("mcp__remote__echo")
		return !ok
	})
}

func TestUnknownSecretIsAStartError(t *testing.T) {
	b := setup(t)
	c, errs := mcp.Start(context.Background(), []mcp.ServerConfig{{Name: "remote", URL: "http://127.0.0.1:1/mcp",
		Headers: map[string]string{"Authorization": "Bearer ${secret:NOPE}"}}}, mcp.Options{Env: b.env})
	defer func() { _ = c.Close() }()
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), `secret "NOPE" is not defined`) {
		t.Fatalf("errs = %v", errs)
	}
}

func TestBadServersFailToStartClearly(t *testing.T) {
	b := setup(t)
	notExec := filepath.Join(b.env.WorkingDir(), "server.sh")
	if err := os.WriteFile(notExec, []byte("#!/bin/sh\necho hi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfgs := []mcp.ServerConfig{
		{Name: "noexec", Command: notExec},
		{Name: "garbage", Command: "bash", Args: []string{"-c", "echo 'this is not JSON-RPC'; echo oops >&2; sleep 30"}, StartTimeout: 10 * time.Second},
		{Name: "hang", Command: "sleep", Args: []string{"300"}, StartTimeout: time.Second},
		selfServer(t, "good"),
	}
	c, errs := mcp.Start(context.Background(), cfgs, mcp.Options{Env: b.env})
	defer func() { _ = c.Close() }()
	want := map[string]string{"noexec": "Permission denied", "garbage": "oops", "hang": "did not answer within 1s"}
	if len(errs) != len(want) {
		t.Fatalf("start errors = %v, want one for each of %v", errs, want)
	}
	for _, e := range errs {
		if !strings.Contains(e.Error(), want[e.Server]) {
			t.Errorf("%s: %v, want it to mention %q", e.Server, e, want[e.Server])
		}
	}
	if got := c.Servers(); len(got) != 1 || got[0] != "good" {
		t.Fatalf("started servers = %v, want [good]", got)
	}
}

func TestServerThatDiesMidCallRestartsOnNextCall(t *testing.T) {
	b := setup(t)
	b.start(t, selfServer(t, "probe"))
	res := b.call("mcp__probe__die", `{}`)
	if !res.IsError || !strings.Contains(res.Content, "started again on the next call") {
		t.Fatalf("die = %+v", res)
	}
	res = b.call("mcp__probe__echo", `{"text":"again"}`)
	if res.IsError || res.Content != "echo: again" {
		t.Fatalf("echo after restart = %+v", res)
	}
}

func TestCallTimeout(t *testing.T) {
	b := setup(t)
	cfg := selfServer(t, "probe")
	cfg.CallTimeout = 500 * time.Millisecond
	b.start(t, cfg)
	res := b.call("mcp__probe__slow", `{"seconds":30}`)
	if !res.IsError || !strings.Contains(res.Content, "did not answer within 500ms") {
		t.Fatalf("slow = %+v", res)
	}
	if res := b.call("mcp__probe__echo", `{"text":"still here"}`); res.Content != "echo: still here" {
		t.Fatalf("echo after a timeout = %+v", res)
	}
}

func TestOutputLimit(t *testing.T) {
	b := setup(t)
	cfg := selfServer(t, "probe")
	cfg.MaxOutputChars = 100
	b.start(t, cfg)
	res := b.call("mcp__probe__echo", `{"text":"`+strings.Repeat("x", 5000)+`"}`)
	if !res.Truncated || len(res.Content) > 400 || len(res.Full) < 5000 {
		t.Fatalf("truncated=%v content=%d full=%d", res.Truncated, len(res.Content), len(res.Full))
	}
}

func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		cfg  mcp.ServerConfig
		want string
	}{
		{mcp.ServerConfig{Name: "a b", Command: "x"}, "name must be"},
		{mcp.ServerConfig{Name: "a__b", Command: "x"}, `must not contain "__"`},
		{mcp.ServerConfig{Name: "a"}, "command or url is required"},
		{mcp.ServerConfig{Name: "a", Command: "x", URL: "http://h"}, "exclusive"},
		{mcp.ServerConfig{Name: "a", URL: "ftp://h"}, "http or https URL"},
		{mcp.ServerConfig{Name: "a", URL: "http://h", Transport: "websocket"}, `transport "websocket" is unknown`},
		{mcp.ServerConfig{Name: "a", Command: "x", Transport: mcp.TransportSSE}, "transport needs a url"},
	} {
		err := tc.cfg.Validate("mcp_servers[0]")
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "mcp_servers[0].") {
			t.Errorf("%+v: %v, want %q", tc.cfg, err, tc.want)
		}
	}
}

func TestSecretsResolve(t *testing.T) {
	t.Setenv("MCPTEST_FROM_ENV", "from-env")
	s := mcp.Secrets{Values: map[string]string{"gh": "folded", "Exact": "exact"}, AllowEnv: true}
	for in, want := range map[string]string{
		"Bearer ${secret:GH}":           "Bearer folded",
		"${secret:Exact}/${secret:gh}":  "exact/folded",
		"${secret:MCPTEST_FROM_ENV}":    "from-env",
		"no references here ${secret:}": "no references here ${secret:}",
	} {
		if got, err := s.Resolve(in); err != nil || got != want {
			t.Errorf("Resolve(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := (mcp.Secrets{}).Resolve("${secret:MCPTEST_FROM_ENV}"); err == nil || !strings.Contains(err.Error(), "mcp_secrets") {
		t.Fatalf("an environment variable was read without AllowEnv: %v", err)
	}
}

func TestSecretsStayOutOfErrors(t *testing.T) {
	b := setup(t)
	cfg := mcp.ServerConfig{Name: "leaky", Command: "bash", Args: []string{"-c", `echo "token is $TOKEN" >&2; exit 1`},
		Env: map[string]string{"TOKEN": "${secret:T}"}}
	c, errs := mcp.Start(context.Background(), []mcp.ServerConfig{cfg},
		mcp.Options{Env: b.env, Secrets: mcp.Secrets{Values: map[string]string{"T": "hunter2-value"}}})
	defer func() { _ = c.Close() }()
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "token is [secret]") || strings.Contains(errs[0].Error(), "hunter2") {
		t.Fatalf("errs = %v", errs)
	}
}
