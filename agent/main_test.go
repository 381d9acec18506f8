package agent_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentfleet/agentfleet/internal/testenv"
)

// envServeMCP makes the test binary a stdio MCP server (see serveMCP).
const envServeMCP = "AGENTFLEET_AGENTTEST_MCP_SERVE"

// TestMain plants a secret-looking and a plain variable in the process
// environment (before any parallel test runs) for the env-filtering check.
// Started with envServeMCP=1, the binary is a sample MCP server instead.
func TestMain(m *testing.M) {
	if os.Getenv(envServeMCP) == "1" {
		serveMCP()
		return
	}
	_ = os.Setenv("AGENTFLEET_PROBE_API_KEY", "must-not-leak")
	_ = os.Setenv("AGENTFLEET_PROBE_PLAIN", "visible-value")
	testenv.VerifyTestMain(m)
}

type saveIn struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

// serveMCP serves one tool, save, which writes content to path relative
// to the server's working directory (the task's, as a stdio server runs
// in the task's environment): the kind of tool an MCP server may offer
// whose paths the permission layer cannot read.
func serveMCP() {
	s := sdk.NewServer(&sdk.Implementation{Name: "notes", Version: "1"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "save", Description: "Save content to a file."}, func(ctx context.Context, _ *sdk.CallToolRequest, in saveIn) (*sdk.CallToolResult, any, error) {
		if err := os.MkdirAll(filepath.Dir(in.Path), 0o755); err != nil {
			return nil, nil, err
		}
		if err := os.WriteFile(in.Path, []byte(in.Content), 0o755); err != nil {
			return nil, nil, err
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "saved " + in.Path}}}, nil, nil
	})
	_ = s.Run(context.Background(), &sdk.StdioTransport{})
	os.Exit(0)
}
