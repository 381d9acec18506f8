package dispatcher

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/agentfleet/agentfleet/fleet/api"
	"github.com/agentfleet/agentfleet/fleet/budget"
	"github.com/agentfleet/agentfleet/internal/identity"
	"github.com/agentfleet/agentfleet/store"
)

// economics is what the usage and budget endpoints ask of the dispatcher.
type economics interface {
	Usage(ctx context.Context, p store.UsageParams) (api.UsageReport, error)
	PutBudget(ctx context.Context, tenant, label string, req api.BudgetRequest) (api.Budget, error)
	GetBudget(ctx context.Context, tenant, label string) (api.Budget, error)
	ListBudgets(ctx context.Context, tenants []string) ([]api.Budget, error)
	DeleteBudget(ctx context.Context, tenant, label string) error
}

// Usage sums the sessions p selects, per group and in total.
func (d *Dispatcher) Usage(ctx context.Context, p store.UsageParams) (api.UsageReport, error) {
	rows, err := d.store.Usage(ctx, p)
	if err != nil {
		return api.UsageReport{}, err
	}
	rep := api.UsageReport{GroupBy: string(p.GroupBy), LabelKey: p.LabelKey, Rows: make([]api.UsageRow, 0, len(rows))}
	for _, r := range rows {
		row := usageRow(r)
		rep.Rows = append(rep.Rows, row)
		rep.Total.Tasks += r.Tasks // a task with sessions on two days counts on each
		rep.Total.Sessions += r.Sessions
		rep.Total.Usage = rep.Total.Usage.Add(r.Usage)
		rep.Total.CostUSD += r.CostUSD
	}
	rep.Total.CacheReadShare = share(rep.Total.Usage)
	if err := d.markUnpriced(ctx, p, rows, &rep); err != nil {
		return api.UsageReport{}, err
	}
	return rep, nil
}

func usageRow(r store.UsageRow) api.UsageRow {
	return api.UsageRow{Key: r.Key, Tasks: r.Tasks, Sessions: r.Sessions, Usage: r.Usage, CostUSD: r.CostUSD,
		CacheReadShare: share(r.Usage)}
}

func share(u store.Usage) float64 {
	if u.InputTokens == 0 {
		return 0
	}
	return float64(u.CacheReadTokens) / float64(u.InputTokens)
}

// usage serves GET /v1/usage?group_by=&label_key=&label=k=v&since=&until=.
func (a *handlers) usage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	p := store.UsageParams{GroupBy: store.UsageGroup(q.Get("group_by")), LabelKey: q.Get("label_key")}
	switch p.GroupBy {
	case store.GroupTotal, store.GroupProfile, store.GroupModel, store.GroupDay:
	case store.GroupLabel:
		if p.LabelKey == "" {
			badRequestf(w, "label_key", "is required with group_by=label: name the label whose values are the groups, e.g. label_key=team")
			return
		}
	default:
		badRequestf(w, "group_by", "%q must be one of label, profile, model, day (or absent for the total)", p.GroupBy)
		return
	}
	labels, field, reason := parseLabels(q["label"])
	if field != "" {
		badRequestf(w, field, "%s", reason)
		return
	}
	p.Labels = labels
	for name, dst := range map[string]*time.Time{"since": &p.Since, "until": &p.Until} {
		if v := q.Get(name); v != "" {
			t, err := parseDayOrTime(v)
			if err != nil {
				badRequestf(w, name, "%q is not a date (2025-01-02) or an RFC 3339 time (2025-01-02T15:04:05Z)", v)
				return
			}
			*dst = t
		}
	}
	p.Tenants = tenantFilter(principal(r), identity.Viewer, q.Get("tenant"))
	rep, err := a.econ.Usage(r.Context(), p)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, rep)
}

func parseDayOrTime(v string) (time.Time, error) {
	if t, err := time.Parse(time.DateOnly, v); err == nil {
		return t, nil
	}
	return time.Parse(time.RFC3339Nano, v)
}

// maxBudgetBody bounds a PUT /v1/budgets body.
const maxBudgetBody = 4 << 10

// budgetScope reads the budget a /v1/budgets/{label}?tenant= route names
// and checks that the principal holds the route's role in its tenant: a
// budget without a tenant is fleet-wide and needs the role in every
// tenant. A tenant the principal cannot see answers 404, as if it had no
// budget; one it sees but may not set budgets in, 403.
func (a *handlers) budgetScope(w http.ResponseWriter, r *http.Request) (tenant, label string, ok bool) {
	tenant, label = r.URL.Query().Get("tenant"), r.PathValue("label")
	if err := budget.ValidScope(tenant, label); err != nil {
		a.fail(w, r, err)
		return "", "", false
	}
	p, role := principal(r), routeAccess[r.Pattern].role
	switch {
	case tenant == "" && !p.Can(identity.AllTenants, role):
		writeErr(w, http.StatusForbidden, api.ErrorDetail{Code: api.CodeForbidden, Field: "tenant", Message: fmt.Sprintf(
			"a budget without a tenant is fleet-wide and needs the role %s in every tenant; name the tenant (?tenant=, --tenant), %s has %s",
			role, p.ID, describeGrants(p))})
		return "", "", false
	case tenant != "" && !p.Can(tenant, identity.Viewer):
		a.fail(w, r, fmt.Errorf("label %s in tenant %s: %w", label, tenant, budget.ErrNotFound))
		return "", "", false
	case tenant != "" && !p.Can(tenant, role):
		writeErr(w, http.StatusForbidden, api.ErrorDetail{Code: api.CodeForbidden, Message: fmt.Sprintf(
			"%s needs the role %s in tenant %s; %s is %s there", r.Pattern, role, tenant, p.ID, p.RoleIn(tenant))})
		return "", "", false
	}
	noteAudit(r, tenant, label)
	return tenant, label, true
}

func (a *handlers) putBudget(w http.ResponseWriter, r *http.Request) {
	tenant, label, ok := a.budgetScope(w, r)
	if !ok {
		return
	}
	var req api.BudgetRequest
	if !decodeBody(w, r, maxBudgetBody, "body", &req) {
		return
	}
	b, err := a.econ.PutBudget(r.Context(), tenant, label, req)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, b)
}

func (a *handlers) getBudget(w http.ResponseWriter, r *http.Request) {
	tenant, label, ok := a.budgetScope(w, r)
	if !ok {
		return
	}
	b, err := a.econ.GetBudget(r.Context(), tenant, label)
	if err != nil {
		a.fail(w, r, fmt.Errorf("label %s: %w", label, err))
		return
	}
	writeJSON(w, http.StatusOK, b)
}

// listBudgets lists the budgets of the tenants where the principal is a
// viewer (?tenant= narrows); fleet-wide budgets only to a viewer of
// every tenant, without ?tenant=.
func (a *handlers) listBudgets(w http.ResponseWriter, r *http.Request) {
	all, err := a.econ.ListBudgets(r.Context(), tenantFilter(principal(r), identity.Viewer, r.URL.Query().Get("tenant")))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, api.BudgetList{Budgets: all})
}

func (a *handlers) deleteBudget(w http.ResponseWriter, r *http.Request) {
	tenant, label, ok := a.budgetScope(w, r)
	if !ok {
		return
	}
	if err := a.econ.DeleteBudget(r.Context(), tenant, label); err != nil {
		a.fail(w, r, fmt.Errorf("label %s: %w", label, err))
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
