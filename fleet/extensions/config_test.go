package extensions

import (
	"slices"
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/tools/mcp"
)

// TestMCPTransportReachesTheClient: a spec's transport is checked by the
// same values the client knows, and carried to its configuration.
func TestMCPTransportReachesTheClient(t *testing.T) {
	if !slices.Equal(fleet.MCPTransports, mcp.Transports) {
		t.Fatalf("fleet.MCPTransports %v and mcp.Transports %v differ", fleet.MCPTransports, mcp.Transports)
	}
	c := Config{MCPHTTPAllowlist: []string{"https://mcp.example"}}
	out, err := c.taskServers([]fleet.MCPServer{{Name: "legacy", URL: "https://mcp.example/sse", Transport: "sse"}})
	if err != nil || len(out) != 1 || out[0].Transport != mcp.TransportSSE {
		t.Fatalf("taskServers = %+v, %v; want the sse transport carried", out, err)
	}
	c.MCPServers = []mcp.ServerConfig{{Name: "op", URL: "https://op.example/sse", Transport: "legacy-sse"}}
	errs := c.Validate()
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), `mcp_servers[0].transport "legacy-sse" is unknown`) {
		t.Fatalf("Validate = %v, want the operator's unknown transport named", errs)
	}
}
