package mcp_test

import (
	"context"
	"os"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentfleet/agentfleet/internal/testenv"
)

// envServe makes the test binary an MCP server on stdio (see serveStdio).
const envServe = "AGENTFLEET_MCPTEST_SERVE"

func TestMain(m *testing.M) {
	if os.Getenv(envServe) == "1" {
		serveStdio()
		return
	}
	testenv.VerifyTestMain(m)
}

type echoIn struct {
	Text string `json:"text"`
}

type slowIn struct {
	Seconds int `json:"seconds"`
}

// testServer is an SDK server with three tools: echo, slow (sleeps) and
// die (exits the process in the middle of the call).
func testServer() *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "probe", Version: "1"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "echo", Description: "Echo the text."}, func(ctx context.Context, _ *sdk.CallToolRequest, in echoIn) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "echo: " + in.Text}}}, nil, nil
	})
	sdk.AddTool(s, &sdk.Tool{Name: "slow", Description: "Sleep."}, func(ctx context.Context, _ *sdk.CallToolRequest, in slowIn) (*sdk.CallToolResult, any, error) {
		select {
		case <-time.After(time.Duration(in.Seconds) * time.Second):
		case <-ctx.Done():
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "slept"}}}, nil, nil
	})
	sdk.AddTool(s, &sdk.Tool{Name: "die", Description: "Exit."}, func(ctx context.Context, _ *sdk.CallToolRequest, in struct{}) (*sdk.CallToolResult, any, error) {
		os.Exit(3)
		return nil, nil, nil
	})
	return s
}

func serveStdio() {
	_ = testServer().Run(context.Background(), &sdk.StdioTransport{})
	os.Exit(0)
}
