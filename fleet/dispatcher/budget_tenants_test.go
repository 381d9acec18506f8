package dispatcher

import (
	"context"
	"net/http"
	"testing"

	"github.com/agentfleet/agentfleet/fleet/api"
	"github.com/agentfleet/agentfleet/store"
)

// TestTenantBudgetsAPI: a tenant's admin sets and reads its tenant's
// budgets only, and they count its tenant's tasks only; a fleet-wide
// budget (no tenant) stays an admin of every tenant's; a tenant's budget
// of every task counts them all.
func TestTenantBudgetsAPI(t *testing.T) {
	f := setupTenants(t, sqliteStore)
	ctx := context.Background()
	spend := func(who string, usd float64) {
		spec := validSpec("p")
		spec.Labels = map[string]string{"team": "x"}
		task := f.submitAs(t, who, spec)
		runTask(t, f.st, task.ID)
		if _, err := f.st.UpdateSession(ctx, store.UpdateSessionParams{ID: task.ID, AddCostUSD: usd}); err != nil {
			t.Fatal(err)
		}
	}
	spend("submitter", 2)   // team-a
	spend("b-submitter", 5) // team-b

	admin := f.clients["admin"] // admin of team-a
	b, err := admin.PutTenantBudget(ctx, "team-a", "team=x", api.BudgetRequest{LimitUSD: 3})
	if err != nil || b.Tenant != "team-a" || b.SpentUSD != 2 || b.Exhausted || b.Tasks != 1 {
		t.Fatalf("team-a's admin sets team-a's budget of team=x: %+v, %v; want $2 spent of $3 (team-b's $5 not counted), 1 task", b, err)
	}
	_, err = admin.PutBudget(ctx, "team=x", api.BudgetRequest{LimitUSD: 3})
	wantStatus(t, "team-a's admin sets a fleet-wide budget", err, http.StatusForbidden)
	_, err = admin.PutTenantBudget(ctx, "team-b", "team=x", api.BudgetRequest{LimitUSD: 3})
	wantStatus(t, "team-a's admin sets team-b's budget", err, http.StatusNotFound)
	_, err = f.clients["viewer"].PutTenantBudget(ctx, "team-a", "team=x", api.BudgetRequest{LimitUSD: 30})
	wantStatus(t, "team-a's viewer sets team-a's budget", err, http.StatusForbidden)
	_, err = admin.PutTenantBudget(ctx, "", "*", api.BudgetRequest{LimitUSD: 3})
	wantStatus(t, "a budget of every task without a tenant", err, http.StatusBadRequest)

	whole, err := f.client.PutTenantBudget(ctx, "team-b", "*", api.BudgetRequest{LimitUSD: 4})
	if err != nil || whole.SpentUSD != 5 || !whole.Exhausted {
		t.Fatalf("team-b's budget of every task: %+v, %v; want $5 of $4, exhausted", whole, err)
	}
	fleetWide, err := f.client.PutBudget(ctx, "team=x", api.BudgetRequest{LimitUSD: 10})
	if err != nil || fleetWide.Tenant != "" || fleetWide.SpentUSD != 7 {
		t.Fatalf("the fleet-wide budget of team=x: %+v, %v; want $7 spent (both tenants)", fleetWide, err)
	}

	l, err := f.clients["viewer"].Budgets(ctx)
	if err != nil || len(l.Budgets) != 1 || l.Budgets[0].Tenant != "team-a" {
		t.Fatalf("team-a's viewer lists %+v, %v; want team-a's budget only", l.Budgets, err)
	}
	if got, err := f.clients["viewer"].TenantBudget(ctx, "team-a", "team=x"); err != nil || got.LimitUSD != 3 {
		t.Fatalf("team-a's viewer reads its budget: %+v, %v", got, err)
	}
	_, err = f.clients["viewer"].TenantBudget(ctx, "team-b", "*")
	wantStatus(t, "team-a's viewer reads team-b's budget", err, http.StatusNotFound)
	_, err = f.clients["viewer"].Budget(ctx, "team=x")
	wantStatus(t, "team-a's viewer reads the fleet-wide budget", err, http.StatusForbidden)
	if l, err := f.client.Budgets(ctx); err != nil || len(l.Budgets) != 3 {
		t.Fatalf("the bootstrap admin lists %+v, %v; want all 3", l.Budgets, err)
	}
	if l, err := f.client.TenantBudgets(ctx, "team-b"); err != nil || len(l.Budgets) != 1 || l.Budgets[0].Label != "*" {
		t.Fatalf("?tenant=team-b lists %+v, %v", l.Budgets, err)
	}
	if err := admin.DeleteTenantBudget(ctx, "team-a", "team=x"); err != nil {
		t.Fatal(err)
	}
	if got, err := f.client.Budget(ctx, "team=x"); err != nil || got.LimitUSD != 10 {
		t.Fatalf("deleting team-a's budget left the fleet-wide one: %+v, %v", got, err)
	}
}
