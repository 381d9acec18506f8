package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentfleet/agentfleet/tools"
)

// Names of the resource tools.
const (
	ListResourcesTool = "mcp_list_resources"
	ReadResourceTool  = "mcp_read_resource"
)

type listResourcesParams struct {
	Server string `json:"server,omitempty"`
}

type readResourceParams struct {
	Server string `json:"server"`
	URI    string `json:"uri"`
}

// listResourcesTool lists the resources of one server, or of all.
func (c *Client) listResourcesTool() tools.Tool {
	return tools.Typed(tools.Tool{
		Name: ListResourcesTool,
		Description: "List the resources (documents, schemas, files...) that the connected MCP servers offer, " +
			"with the URI to pass to " + ReadResourceTool + ". Give server to list one server's only.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"server":{"type":"string","description":"Name of one MCP server; omit for all."}},"additionalProperties":false}`),
	}, func(ctx context.Context, call tools.Call, p listResourcesParams) (tools.Output, error) {
		return c.listResources(ctx, p.Server)
	})
}

// readResourceTool reads one resource by URI.
func (c *Client) readResourceTool() tools.Tool {
	return tools.Typed(tools.Tool{
		Name:        ReadResourceTool,
		Description: "Read one resource of an MCP server by its URI (as " + ListResourcesTool + " shows it).",
		Parameters: json.RawMessage(`{"type":"object","properties":{"server":{"type":"string","description":"Name of the MCP server."},` +
			`"uri":{"type":"string","description":"URI of the resource."}},"required":["server","uri"],"additionalProperties":false}`),
	}, func(ctx context.Context, call tools.Call, p readResourceParams) (tools.Output, error) {
		s, err := c.byName(p.Server)
		if err != nil {
			return tools.Output{}, err
		}
		return s.readResource(ctx, p.URI)
	})
}

func (c *Client) listResources(ctx context.Context, only string) (tools.Output, error) {
	var b strings.Builder
	for _, s := range c.servers {
		if (only != "" && s.cfg.Name != only) || !s.hasResources() {
			continue
		}
		list, err := s.listResources(ctx)
		if err != nil {
			fmt.Fprintf(&b, "%s: error: %v\n", s.cfg.Name, err)
			continue
		}
		for _, r := range list {
			fmt.Fprintf(&b, "%s\t%s\t%s", s.cfg.Name, r.URI, r.Name)
			if r.MIMEType != "" {
				fmt.Fprintf(&b, " (%s)", r.MIMEType)
			}
			if r.Description != "" {
				fmt.Fprintf(&b, ": %s", r.Description)
			}
			b.WriteByte('\n')
		}
	}
	if only != "" {
		if _, err := c.byName(only); err != nil {
			return tools.Output{}, err
		}
	}
	if b.Len() == 0 {
		return tools.Output{Text: "No resources."}, nil
	}
	return tools.Output{Text: "server\turi\tname\n" + b.String()}, nil
}

// listResources reads every page of resources/list (at most 1000 entries).
func (s *server) listResources(ctx context.Context) ([]*sdk.Resource, error) {
	sess, err := s.session(ctx)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.CallTimeout)
	defer cancel()
	var out []*sdk.Resource
	for r, err := range sess.Resources(ctx, nil) {
		if err != nil {
			return out, s.callError(ctx, sess, err)
		}
		out = append(out, r)
		if len(out) >= 1000 {
			break
		}
	}
	return out, nil
}

// readResource reads one resource's contents.
func (s *server) readResource(ctx context.Context, uri string) (tools.Output, error) {
	sess, err := s.session(ctx)
	if err != nil {
		return tools.Output{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.CallTimeout)
	defer cancel()
	res, err := sess.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
	if err != nil {
		return tools.Output{}, s.callError(ctx, sess, err)
	}
	parts := make([]string, 0, len(res.Contents))
	for _, c := range res.Contents {
		parts = append(parts, resourceText(c))
	}
	return tools.Output{Text: strings.Join(parts, "\n")}, nil
}
