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

// PutBudget sets the fleet-wide budget of a label ("key=value"); it needs
// an admin of every tenant. PutTenantBudget sets a tenant's.
func (c *Client) PutBudget(ctx context.Context, label string, req api.BudgetRequest) (api.Budget, error) {
	return c.PutTenantBudget(ctx, "", label, req)
}

// PutTenantBudget sets the budget of a label within tenant (its tasks of
// that tenant; label "*": every task of the tenant); tenant "" is a
// fleet-wide budget.
func (c *Client) PutTenantBudget(ctx context.Context, tenant, label string, req api.BudgetRequest) (api.Budget, error) {
	var out api.Budget
	return out, c.do(ctx, http.MethodPut, "/v1/budgets/"+url.PathEscape(label), tenantQuery(tenant), req, &out)
}

// Budget returns the fleet-wide budget of a label.
func (c *Client) Budget(ctx context.Context, label string) (api.Budget, error) {
	return c.TenantBudget(ctx, "", label)
}

// TenantBudget returns the budget of a label within tenant ("":
// fleet-wide).
func (c *Client) TenantBudget(ctx context.Context, tenant, label string) (api.Budget, error) {
	var out api.Budget
	return out, c.do(ctx, http.MethodGet, "/v1/budgets/"+url.PathEscape(label), tenantQuery(tenant), nil, &out)
}

// Budgets lists every budget the caller may see.
func (c *Client) Budgets(ctx context.Context) (api.BudgetList, error) {
	return c.TenantBudgets(ctx, "")
}

// TenantBudgets lists the budgets of tenant ("": of every tenant the
// caller sees, and the fleet-wide ones to a viewer of every tenant).
func (c *Client) TenantBudgets(ctx context.Context, tenant string) (api.BudgetList, error) {
	var out api.BudgetList
	return out, c.do(ctx, http.MethodGet, "/v1/budgets", tenantQuery(tenant), nil, &out)
}

// DeleteBudget removes the fleet-wide budget of a label; its held tasks
// are released.
func (c *Client) DeleteBudget(ctx context.Context, label string) error {
	return c.DeleteTenantBudget(ctx, "", label)
}

// DeleteTenantBudget removes the budget of a label within tenant ("":
// fleet-wide); its held tasks are released.
func (c *Client) DeleteTenantBudget(ctx context.Context, tenant, label string) error {
	return c.do(ctx, http.MethodDelete, "/v1/budgets/"+url.PathEscape(label), tenantQuery(tenant), nil, nil)
}

// tenantQuery is ?tenant= when tenant is set, else no query.
func tenantQuery(tenant string) url.Values {
	if tenant == "" {
		return nil
	}
	return url.Values{"tenant": {tenant}}
}
