package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/agentfleet/agentfleet/fleet/api"
)

// Whoami returns the principal the client's token authenticates as.
func (c *Client) Whoami(ctx context.Context) (api.Whoami, error) {
	var out api.Whoami
	return out, c.do(ctx, http.MethodGet, "/v1/whoami", nil, nil, &out)
}

// CreateToken creates an API token (admin only). The answer carries the
// secret, which is never shown again.
func (c *Client) CreateToken(ctx context.Context, req api.TokenRequest) (api.CreatedToken, error) {
	var out api.CreatedToken
	return out, c.do(ctx, http.MethodPost, "/v1/tokens", nil, req, &out)
}

// ListTokens lists the tokens the caller manages; revoked ones too with
// includeRevoked.
func (c *Client) ListTokens(ctx context.Context, includeRevoked bool) ([]api.TokenView, error) {
	var q url.Values
	if includeRevoked {
		q = url.Values{"revoked": {"true"}}
	}
	var out api.TokenList
	return out.Tokens, c.do(ctx, http.MethodGet, "/v1/tokens", q, nil, &out)
}

// RevokeToken revokes the token id; it is refused from then on.
func (c *Client) RevokeToken(ctx context.Context, id string) (api.TokenView, error) {
	var out api.TokenView
	return out, c.do(ctx, http.MethodDelete, "/v1/tokens/"+url.PathEscape(id), nil, nil, &out)
}

// AuditFilter selects audit entries; zero fields do not filter.
type AuditFilter struct {
	Tenant, Principal, Action string
	Since, Until              time.Time
	Limit                     int
	Cursor                    string
}

// Audit returns one page of the audit log, newest first.
func (c *Client) Audit(ctx context.Context, f AuditFilter) (api.AuditList, error) {
	q := url.Values{}
	for k, v := range map[string]string{"tenant": f.Tenant, "principal": f.Principal, "action": f.Action, "cursor": f.Cursor} {
		if v != "" {
			q.Set(k, v)
		}
	}
	if !f.Since.IsZero() {
		q.Set("since", f.Since.UTC().Format(time.RFC3339Nano))
	}
	if !f.Until.IsZero() {
		q.Set("until", f.Until.UTC().Format(time.RFC3339Nano))
	}
	if f.Limit > 0 {
		q.Set("limit", strconv.Itoa(f.Limit))
	}
	var out api.AuditList
	return out, c.do(ctx, http.MethodGet, "/v1/audit", q, nil, &out)
}
