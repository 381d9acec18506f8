package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/tools/mcp/mcptest"
)

func runMCPCmd(args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	code := execute(context.Background(), args, strings.NewReader(""), &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestWorkerMCPOnTheEverythingServer(t *testing.T) {
	cfg := mcptest.NPX(t, "everything", mcptest.Everything, "stdio")
	server := append([]string{"--", cfg.Command}, cfg.Args...)
	dir := t.TempDir()
	code, out, errOut := runMCPCmd(append([]string{"mcp", "tools", "--json", "--dir", dir}, server...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var defs []llm.ToolDefinition
	if err := json.Unmarshal([]byte(out), &defs); err != nil {
		t.Fatalf("not JSON definitions: %v\n%s", err, out)
	}
	var echo *llm.ToolDefinition
	for i := range defs {
		if defs[i].Name == "mcp__cli__echo" {
			echo = &defs[i]
		}
	}
	if echo == nil || !strings.Contains(string(echo.Parameters), `"message"`) {
		t.Fatalf("no mcp__cli__echo with its schema among %d tools", len(defs))
	}
	code, out, errOut = runMCPCmd(append([]string{"mcp", "call", "--dir", dir, "--tool", "echo", "--args", `{"message":"hi there"}`}, server...)...)
	if code != 0 || !strings.Contains(out, "hi there") {
		t.Fatalf("call: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	code, out, _ = runMCPCmd(append([]string{"mcp", "call", "--dir", dir, "--tool", "mcp__cli__echo", "--args", `{}`}, server...)...)
	if code != 1 || !strings.Contains(out, "message") {
		t.Fatalf("call without its required argument: exit %d, stdout %q", code, out)
	}
}

func TestWorkerMCPOverHTTP(t *testing.T) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "t", Version: "1"}, nil)
	sdk.AddTool(srv, &sdk.Tool{Name: "whoami", Description: "Say who called."}, func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "caller " + req.Extra.Header.Get("X-Caller")}}}, nil, nil
	})
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	defer ts.Close()
	t.Setenv("CALLER_NAME", "fleet")
	code, out, errOut := runMCPCmd("mcp", "call", "--url", ts.URL, "--allow-private", "127.0.0.1", "--header", "X-Caller=${secret:CALLER_NAME}", "--tool", "whoami")
	if code != 0 || strings.TrimSpace(out) != "caller fleet" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	code, out, _ = runMCPCmd("mcp", "tools", "--url", ts.URL, "--allow-private", "127.0.0.0/8")
	if code != 0 || !strings.Contains(out, "mcp__cli__whoami\n    Say who called.") {
		t.Fatalf("tools: exit %d, stdout %q", code, out)
	}
	// Without --allow-private the loopback server is refused.
	code, _, errOut = runMCPCmd("mcp", "tools", "--url", ts.URL)
	if code != 1 || !strings.Contains(errOut, "loopback") {
		t.Fatalf("tools without --allow-private: exit %d, stderr %q", code, errOut)
	}
}

func TestWorkerMCPBadUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"mcp", "tools"}, 2, "give the server's command after --"},
		{[]string{"mcp", "tools", "--url", "http://x", "--", "cat"}, 2, "not both"},
		{[]string{"mcp", "call", "--", "cat"}, 2, "--tool is required"},
		{[]string{"mcp", "tools", "--timeout", "1s", "--", "sleep", "60"}, 1, "did not answer within 1s"},
		{[]string{"mcp", "tools", "--", "/nonexistent/server"}, 1, "No such file or directory"},
	} {
		code, _, errOut := runMCPCmd(tc.args...)
		if code != tc.code || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tc.args, code, errOut, tc.code, tc.want)
		}
	}
}
