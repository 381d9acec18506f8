package client

import (
	"context"
	"net/http"
	"net/url"
	"time"

	"github.com/agentfleet/agentfleet/fleet/api"
)

// UsageQuery selects and groups GET /v1/usage.
type UsageQuery struct {
	GroupBy  string // "", label, profile, model or day
	LabelKey string // with GroupBy label
	Labels   map[string]string
	Since    time.Time
	Until    time.Time
}

// Usage returns token usage and cost, grouped as q says.
func (c *Client) Usage(ctx context.Context, q UsageQuery) (api.UsageReport, error) {
	v := url.Values{}
	set := func(k, s string) {
		if s != "" {
			v.Set(k, s)
		}
	}
	set("group_by", q.GroupBy)
	set("label_key", q.LabelKey)
	for k, val := range q.Labels {
		v.Add("label", k+"="+val)
	}
	if !q.Since.IsZero() {
		v.Set("since", q.Since.Format(time.RFC3339Nano))
	}
	if !q.Until.IsZero() {
		v.Set("until", q.Until.Format(time.RFC3339Nano))
	}
	var out api.UsageReport
	return out, c.do(ctx, http.MethodGet, "/v1/usage", v, nil, &out)
}

// PutBudget sets the budget of a label ("key=value").
func (c *Client) PutBudget(ctx context.Context, label string, req api.BudgetRequest) (api.Budget, error) {
	var out api.Budget
	return out, c.do(ctx, http.MethodPut, "/v1/budgets/"+url.PathEscape(label), nil, req, &out)
}

// Budget returns the budget of a label.
func (c *Client) Budget(ctx context.Context, label string) (api.Budget, error) {
	var out api.Budget
	return out, c.do(ctx, http.MethodGet, "/v1/budgets/"+url.PathEscape(label), nil, nil, &out)
}

// Budgets lists every budget.
func (c *Client) Budgets(ctx context.Context) (api.BudgetList, error) {
	var out api.BudgetList
	return out, c.do(ctx, http.MethodGet, "/v1/budgets", nil, nil, &out)
}

// DeleteBudget removes the budget of a label; its held tasks are released.
func (c *Client) DeleteBudget(ctx context.Context, label string) error {
	return c.do(ctx, http.MethodDelete, "/v1/budgets/"+url.PathEscape(label), nil, nil, nil)
}
