package dispatcher

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/api"
	"github.com/agentfleet/agentfleet/llm/pricing"
)

// TestUnpricedModelRefusedWhereCostCounts: a task that carries a cost
// limit (its own or the operator's default) or a budgeted label, on a
// model without a price, is refused with a 400 that names the model, the
// field and the setting to add; nothing is stored. The same model without
// a limit or budget is accepted, and the operator's prices make it
// priced. (Before, such a task ran with its cost counted as $0.)
func TestUnpricedModelRefusedWhereCostCounts(t *testing.T) {
	t.Parallel()
	b := setupAPI(t, sqliteStore)
	ctx := context.Background()
	if _, err := b.client.PutBudget(ctx, "team=web", api.BudgetRequest{LimitUSD: 10}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.client.PutTenantBudget(ctx, "capped", "*", api.BudgetRequest{LimitUSD: 10}); err != nil {
		t.Fatal(err)
	}
	tenantCapped := validSpec("tenant capped")
	tenantCapped.Model, tenantCapped.Tenant = "mystery-model", "capped"
	limited := validSpec("limited")
	limited.Model, limited.Limits.MaxCostUSD = "mystery-model", 2
	budgeted := validSpec("budgeted")
	budgeted.Model, budgeted.Labels = "mystery-model", map[string]string{"team": "web", "area": "x"}
	summary := validSpec("summary")
	summary.Limits.MaxCostUSD, summary.Context.SummaryModel = 2, "cheap-mystery"
	for _, c := range []struct {
		name        string
		spec        fleet.TaskSpec
		field, want string
	}{
		{"cost limit", limited, "tasks[0].model", "limits.max_cost_usd 2"},
		{"budgeted label", budgeted, "tasks[0].model", "label team=web"},
		{"summary model", summary, "tasks[0].context.summary_model", "cheap-mystery"},
		{"tenant's budget of every task", tenantCapped, "tasks[0].model", "every task of tenant capped"},
	} {
		code, detail, raw := b.rawCall(t, http.MethodPost, "/v1/tasks/batch", api.BatchRequest{Tasks: []fleet.TaskSpec{c.spec}}, testToken)
		if code != http.StatusBadRequest || detail.Field != c.field {
			t.Fatalf("%s: %d field %q, want 400 naming %s: %s", c.name, code, detail.Field, c.field, raw)
		}
		for _, want := range []string{c.want, "no price is known", "prices.", "input_per_mtok"} {
			if !strings.Contains(detail.Message, want) {
				t.Errorf("%s: the refusal %q does not say %q", c.name, detail.Message, want)
			}
		}
	}
	if !strings.Contains(func() string {
		_, d, _ := b.rawCall(t, http.MethodPost, "/v1/tasks", limited, testToken)
		return d.Message
	}(), "prices.mystery-model") {
		t.Error("the single-task refusal does not name prices.mystery-model")
	}
	if n := b.storedTasks(t); n != 0 {
		t.Fatalf("%d tasks stored from refused submissions", n)
	}
	free := validSpec("no limit")
	free.Model, free.Labels = "mystery-model", map[string]string{"team": "mobile"}
	if _, err := b.client.Submit(ctx, free); err != nil {
		t.Fatalf("an unpriced model without a cost limit or budget was refused: %v", err)
	}
	priced := validSpec("priced")
	priced.Model, priced.Limits.MaxCostUSD = "gpt-5.2-codex", 2
	if _, err := b.client.Submit(ctx, priced); err != nil {
		t.Fatalf("a priced model with a cost limit was refused: %v", err)
	}
}

// TestOperatorPricesAndDefaultLimit: the dispatcher's prices setting
// prices a model, and the operator's default cost limit counts as the
// task's own.
func TestOperatorPricesAndDefaultLimit(t *testing.T) {
	t.Parallel()
	b := setupAPIWith(t, sqliteStore, func(c *Config) {
		c.DefaultLimits = fleet.Limits{MaxCostUSD: 5}
		c.Prices = map[string]pricing.Price{"local-llama": {}}
	})
	ctx := context.Background()
	s := validSpec("default limit")
	s.Model = "mystery-model"
	if _, err := b.client.Submit(ctx, s); err == nil || !strings.Contains(err.Error(), "limits.max_cost_usd 5") {
		t.Fatalf("the operator's default cost limit did not refuse an unpriced model: %v", err)
	}
	s.Model = "local-llama"
	if _, err := b.client.Submit(ctx, s); err != nil {
		t.Fatalf("a model the operator priced (at $0) was refused: %v", err)
	}
	if _, err := New(b.st, b.q, Config{Prices: map[string]pricing.Price{"x": {InputPerMTok: -1}}}); err == nil ||
		!strings.Contains(err.Error(), "prices.x.input_per_mtok") {
		t.Fatalf("a negative price was accepted: %v", err)
	}
}
