package api

import (
	"time"

	"github.com/agentfleet/agentfleet/store"
)

// UsageRow is one group of GET /v1/usage.
type UsageRow struct {
	Key      string      `json:"key"` // the label value, profile, model or day (YYYY-MM-DD); "" for the total or no value
	Tasks    int64       `json:"tasks"`
	Sessions int64       `json:"sessions"`
	Usage    store.Usage `json:"usage"`
	CostUSD  float64     `json:"cost_usd"`
	// CacheReadShare is cache_read_tokens / input_tokens (0 without input).
	CacheReadShare float64 `json:"cache_read_share"`
	// Unpriced (group_by=model) marks a model without a price: its
	// cost_usd is 0 because its cost is unknown, not because it was free.
	Unpriced bool `json:"unpriced,omitempty"`
}

// UsageReport is the body of GET /v1/usage.
type UsageReport struct {
	GroupBy  string     `json:"group_by"` // "", label, profile, model or day
	LabelKey string     `json:"label_key,omitempty"`
	Rows     []UsageRow `json:"rows"`
	Total    UsageRow   `json:"total"`
	// Unpriced are the selected sessions whose model has no price, one
	// row per model (key: the model): their tokens count above, their
	// cost is unknown and counts as 0 in every cost_usd. Empty when every
	// model is priced.
	Unpriced []UsageRow `json:"unpriced"`
}

// BudgetRequest is the body of PUT /v1/budgets/{label}[?tenant=].
type BudgetRequest struct {
	LimitUSD    float64 `json:"limit_usd"`
	OnExhausted string  `json:"on_exhausted,omitempty"` // hold (default) or cancel
}

// Budget is a label's spending cap as GET and PUT /v1/budgets answer it:
// within Tenant (its tasks of that tenant; Label "*": every task of the
// tenant), or fleet-wide when Tenant is empty.
type Budget struct {
	Tenant      string    `json:"tenant,omitempty"`
	Label       string    `json:"label"`
	LimitUSD    float64   `json:"limit_usd"`
	OnExhausted string    `json:"on_exhausted"`
	SpentUSD    float64   `json:"spent_usd"`
	Exhausted   bool      `json:"exhausted"`
	CheckedAt   time.Time `json:"checked_at,omitzero"`
	UpdatedAt   time.Time `json:"updated_at"`
	// Tasks counts the tasks carrying the label (PUT only); Note says when
	// none does yet (allowed: the budget applies to later submissions).
	Tasks int64  `json:"tasks"`
	Note  string `json:"note,omitempty"`
}

// BudgetList is the body of GET /v1/budgets.
type BudgetList struct {
	Budgets []Budget `json:"budgets"`
}
