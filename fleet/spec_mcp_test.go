package fleet

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestExtensionsValidate(t *testing.T) {
	ok := func(x Extensions) TaskSpec { return TaskSpec{Prompt: "p", Profile: "openai", Extensions: x} }
	srv := func(s MCPServer) Extensions { return Extensions{MCPServers: []MCPServer{s}} }
	hook := func(h Hook) Extensions { return Extensions{Hooks: []Hook{h}} }
	for _, tc := range []struct {
		x     Extensions
		field string
		want  string
	}{
		{srv(MCPServer{Name: "a__b", Command: "x"}), "spec.mcp_servers[0].name", "without"},
		{srv(MCPServer{Name: "a"}), "spec.mcp_servers[0].command", "or url is required"},
		{srv(MCPServer{Name: "a", Command: "x", URL: "http://h"}), "spec.mcp_servers[0].url", "exclusive"},
		{srv(MCPServer{Name: "a", URL: "file:///x"}), "spec.mcp_servers[0].url", "http or https"},
		{srv(MCPServer{Name: "a", URL: "https://h/mcp", Headers: map[string]string{"Authorization": "Bearer abc123"}}),
			"spec.mcp_servers[0].headers.Authorization", "secret reference"},
		{Extensions{MCPServers: []MCPServer{{Name: "a", Command: "x"}, {Name: "a", Command: "y"}}}, "spec.mcp_servers[1].name", "two servers"},
		{hook(Hook{Event: "before_tool", Type: "shell", Command: "x"}), "spec.hooks[0].event", "unknown"},
		{hook(Hook{Event: "pre_tool_use", Type: "shell"}), "spec.hooks[0].command", "required"},
		{hook(Hook{Event: "pre_tool_use", Type: "http", URL: "ftp://x"}), "spec.hooks[0].url", "http or https"},
		{hook(Hook{Event: "pre_tool_use", Type: "shell", Command: "x", Tool: "[a"}), "spec.hooks[0].tool", "glob"},
		{hook(Hook{Event: "pre_tool_use", Type: "shell", Command: "x", Timeout: Duration(time.Hour)}), "spec.hooks[0].timeout", "10m"},
	} {
		err := ok(tc.x).Validate()
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != tc.field || !strings.Contains(fe.Reason, tc.want) {
			t.Errorf("%+v: %v, want %s %q", tc.x, err, tc.field, tc.want)
		}
	}
	good := ok(Extensions{
		MCPServers: []MCPServer{{Name: "gh", URL: "https://mcp.example/", Headers: map[string]string{"Authorization": "Bearer ${secret:GH}"}}},
		Hooks:      []Hook{{Event: "post_tool_use", Tool: "edit_*", Type: "shell", Command: "gofmt -l ."}},
	})
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(good)
	if !strings.Contains(string(b), `"mcp_servers":[`) || !strings.Contains(string(b), `"hooks":[`) {
		t.Fatalf("extensions are not at the top level of the spec: %s", b)
	}
}

// TestMCPServerTransport: transport takes auto, streamable-http or sse,
// only with a url.
func TestMCPServerTransport(t *testing.T) {
	spec := func(s MCPServer) TaskSpec {
		return TaskSpec{Prompt: "p", Profile: "openai", Extensions: Extensions{MCPServers: []MCPServer{s}}}
	}
	for _, tc := range []struct {
		s    MCPServer
		want string
	}{
		{MCPServer{Name: "a", URL: "https://h/sse", Transport: "SSE"}, `"SSE" is unknown, want one of auto, streamable-http, sse`},
		{MCPServer{Name: "a", Command: "x", Transport: "sse"}, "needs a url"},
	} {
		err := spec(tc.s).Validate()
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != "spec.mcp_servers[0].transport" || !strings.Contains(fe.Reason, tc.want) {
			t.Errorf("%+v: %v, want spec.mcp_servers[0].transport %q", tc.s, err, tc.want)
		}
	}
	for _, tr := range append([]string{""}, MCPTransports...) {
		if err := spec(MCPServer{Name: "a", URL: "https://h/sse", Transport: tr}).Validate(); err != nil {
			t.Errorf("transport %q: %v", tr, err)
		}
	}
}
