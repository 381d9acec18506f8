package mcp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/tools"
)

// ToolName is the name the model sees for a server's tool:
// mcp__<server>__<tool>, with characters providers refuse replaced by '_'
// and cut to 64 characters.
func ToolName(server, tool string) string {
	name := "mcp__" + server + "__" + sanitize(tool)
	if len(name) > 64 {
		name = name[:64]
	}
	return name
}

func sanitize(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			b[i] = '_'
		}
	}
	return string(b)
}

// tool wraps one of the server's tools. Its schema is the server's input
// schema, so the pipeline validates arguments before the call; a tool
// whose annotations promise it only reads may run alongside other reads.
func (s *server) tool(t *sdk.Tool) tools.Tool {
	schema, err := json.Marshal(t.InputSchema)
	if err != nil || len(schema) == 0 || string(schema) == "null" {
		schema = []byte(`{"type":"object"}`)
	}
	desc := strings.TrimSpace(t.Description)
	if desc == "" {
		desc = t.Name
	}
	desc += fmt.Sprintf("\n\n(Tool %q of the MCP server %q.)", t.Name, s.cfg.Name)
	readOnly := t.Annotations != nil && t.Annotations.ReadOnlyHint
	remote := t.Name
	return tools.Tool{
		Name: ToolName(s.cfg.Name, t.Name), Description: desc, Parameters: schema,
		Mutates: !readOnly,
		Limits:  tools.Limits{MaxChars: s.cfg.MaxOutputChars},
		Run: func(ctx context.Context, call tools.Call) (tools.Output, error) {
			return s.call(ctx, remote, call.Args)
		},
	}
}

// call runs one tools/call within CallTimeout. A server that broke during
// the call gives an error result and is started again by the next call.
func (s *server) call(ctx context.Context, name string, args json.RawMessage) (tools.Output, error) {
	sess, err := s.session(ctx)
	if err != nil {
		return tools.Output{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.CallTimeout)
	defer cancel()
	res, err := sess.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return tools.Output{}, s.callError(ctx, sess, err)
	}
	return convertResult(res), nil
}

// callError says why a request failed and marks a broken connection.
func (s *server) callError(ctx context.Context, sess *sdk.ClientSession, err error) error {
	var rpcErr *jsonrpc.Error
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return fmt.Errorf("the MCP server %q did not answer within %s; the call was cancelled", s.cfg.Name, s.cfg.CallTimeout)
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.As(err, &rpcErr):
		return fmt.Errorf("the MCP server %q refused the call: %s", s.cfg.Name, rpcErr.Message)
	}
	s.markBroken(sess)
	msg := fmt.Sprintf("the MCP server %q stopped answering during the call (%v); it will be started again on the next call", s.cfg.Name, err)
	if tail := strings.TrimSpace(s.stderr.String()); tail != "" && s.cfg.URL == "" {
		msg += "; its standard error ends with: " + tail
	}
	s.mu.Lock()
	msg = redact(msg, s.secrets)
	s.mu.Unlock()
	return errors.New(msg)
}

// convertResult turns a tools/call result into the text (and images) the
// model sees: text blocks in order, images attached, embedded resources
// inlined, links named; structured content when there is nothing else.
func convertResult(res *sdk.CallToolResult) tools.Output {
	var parts []string
	var images []llm.Image
	for _, c := range res.Content {
		switch c := c.(type) {
		case *sdk.TextContent:
			parts = append(parts, c.Text)
		case *sdk.ImageContent:
			images = append(images, llm.Image{MediaType: c.MIMEType, Data: c.Data})
			parts = append(parts, fmt.Sprintf("[image %s, %d bytes]", c.MIMEType, len(c.Data)))
		case *sdk.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio %s, %d bytes, not shown]", c.MIMEType, len(c.Data)))
		case *sdk.ResourceLink:
			parts = append(parts, fmt.Sprintf("[resource %s: %s]", c.URI, c.Name))
		case *sdk.EmbeddedResource:
			parts = append(parts, resourceText(c.Resource))
		}
	}
	if len(parts) == 0 && res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			parts = append(parts, string(b))
		}
	}
	return tools.Output{Text: strings.Join(parts, "\n"), Images: images, IsError: res.IsError}
}

// resourceText is a resource's text, or a note on its binary content.
func resourceText(r *sdk.ResourceContents) string {
	if r == nil {
		return ""
	}
	if r.Text != "" || len(r.Blob) == 0 {
		return r.Text
	}
	return fmt.Sprintf("[binary resource %s, %s, %d bytes; base64 starts %q]", r.URI, r.MIMEType, len(r.Blob),
		truncateString(base64.StdEncoding.EncodeToString(r.Blob), 64))
}

func truncateString(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}
