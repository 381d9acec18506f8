package budget

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/internal/jscas"
	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/store"
)

// What happens to a label's tasks once its budget is spent.
const (
	Hold   = "hold"
	Cancel = "cancel"
)

// Reason is the task error (and stop reason) of a task stopped, held or
// cancelled by a budget.
const Reason = "budget"

// AllTasks is the Label of a tenant's budget that counts every task of
// the tenant.
const AllTasks = "*"

// Budget is the spending cap of one label, fleet-wide (Tenant empty) or
// within one tenant (the label's tasks of that tenant; Label AllTasks:
// every task of the tenant).
type Budget struct {
	Tenant      string    `json:"tenant,omitempty"` // "": fleet-wide
	Label       string    `json:"label"`            // key=value, or AllTasks with a tenant
	LimitUSD    float64   `json:"limit_usd"`        // >= 0; 0 stops everything at once
	OnExhausted string    `json:"on_exhausted"`     // hold (default) or cancel
	SpentUSD    float64   `json:"spent_usd"`        // as of the last check
	Exhausted   bool      `json:"exhausted"`        // spent_usd >= limit_usd at the last check
	CheckedAt   time.Time `json:"checked_at,omitzero"`
	UpdatedAt   time.Time `json:"updated_at"`
}

// ParseLabel splits "key=value" (or "key:value"); the error names the
// field "label".
func ParseLabel(s string) (key, value string, err error) {
	k, v, ok := strings.Cut(s, "=")
	if !ok {
		k, v, ok = strings.Cut(s, ":")
	}
	if !ok || k == "" {
		return "", "", &fleet.FieldError{Field: "label", Reason: fmt.Sprintf("%q must be key=value, e.g. team=web", s)}
	}
	return k, v, nil
}

// Validate checks the fields a client sets, naming the bad one.
func (b Budget) Validate() error {
	if err := ValidScope(b.Tenant, b.Label); err != nil {
		return err
	}
	if b.LimitUSD < 0 || math.IsNaN(b.LimitUSD) || math.IsInf(b.LimitUSD, 0) {
		return &fleet.FieldError{Field: "limit_usd", Reason: fmt.Sprintf("must be a number >= 0 (USD), got %v", b.LimitUSD)}
	}
	switch b.OnExhausted {
	case "", Hold, Cancel:
	default:
		return &fleet.FieldError{Field: "on_exhausted", Reason: fmt.Sprintf("%q must be hold or cancel", b.OnExhausted)}
	}
	return nil
}

// ValidScope checks a budget's tenant and label: a label is key=value,
// or AllTasks within a tenant.
func ValidScope(tenant, label string) error {
	if label == AllTasks {
		if tenant == "" {
			return &fleet.FieldError{Field: "label", Reason: `"*" (every task) needs a tenant: name it (?tenant=), or set a label budget (key=value)`}
		}
		return nil
	}
	_, _, err := ParseLabel(label)
	return err
}

// Book reads and writes the budgets bucket.
type Book struct {
	kv jetstream.KeyValue
}

// ErrNotFound is returned for a label without a budget; it is a
// store.ErrNotFound, so the API answers 404.
var ErrNotFound = fmt.Errorf("no budget for this label (in this tenant): %w", store.ErrNotFound)

// Open opens (creating it once) the budgets bucket of q's prefix.
func Open(ctx context.Context, q *queue.Client) (*Book, error) {
	kv, err := q.KeyValue(ctx, "budgets", "agentfleet spending caps per label (fleet/budget)")
	if err != nil {
		return nil, err
	}
	return &Book{kv: kv}, nil
}

// keyOf is the bucket key of a budget: the label base64url-encoded for a
// fleet-wide budget (the keys written before tenants), else
// t.<tenant>.<label>, each base64url-encoded.
func keyOf(tenant, label string) string {
	enc := base64.RawURLEncoding.EncodeToString
	if tenant == "" {
		return enc([]byte(label))
	}
	return "t." + enc([]byte(tenant)) + "." + enc([]byte(label))
}

// Put validates and stores b, keeping the spend of the budget it replaces
// (Exhausted is recomputed from it against the new limit at once).
func (bk *Book) Put(ctx context.Context, b Budget) (Budget, error) {
	if err := b.Validate(); err != nil {
		return Budget{}, err
	}
	if b.OnExhausted == "" {
		b.OnExhausted = Hold
	}
	for {
		old, rev, err := bk.get(ctx, b.Tenant, b.Label)
		if err != nil && !errors.Is(err, ErrNotFound) {
			return Budget{}, err
		}
		b.SpentUSD, b.CheckedAt = old.SpentUSD, old.CheckedAt
		b.Exhausted = rev != 0 && b.SpentUSD >= b.LimitUSD
		b.UpdatedAt = time.Now().UTC()
		data, _ := json.Marshal(b)
		if rev == 0 {
			_, err = bk.kv.Create(ctx, keyOf(b.Tenant, b.Label), data)
		} else {
			_, err = bk.kv.Update(ctx, keyOf(b.Tenant, b.Label), data, rev)
		}
		if err == nil {
			return b, nil
		}
		if !jscas.Conflict(err) {
			return Budget{}, err
		}
	}
}

// Get returns the budget of label in tenant ("": fleet-wide),
// ErrNotFound when there is none.
func (bk *Book) Get(ctx context.Context, tenant, label string) (Budget, error) {
	b, _, err := bk.get(ctx, tenant, label)
	return b, err
}

func (bk *Book) get(ctx context.Context, tenant, label string) (Budget, uint64, error) {
	e, err := bk.kv.Get(ctx, keyOf(tenant, label))
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return Budget{}, 0, ErrNotFound
	}
	if err != nil {
		return Budget{}, 0, err
	}
	b, err := decode(e.Value())
	if err != nil {
		return Budget{}, 0, fmt.Errorf("budget: decoding %q of tenant %q: %w", label, tenant, err)
	}
	return b, e.Revision(), nil
}

// decode reads a stored budget; one written before tenants has none.
func decode(data []byte) (Budget, error) {
	var b Budget
	err := json.Unmarshal(data, &b)
	return b, err
}

// Delete removes the budget of label in tenant (ErrNotFound when there is
// none).
func (bk *Book) Delete(ctx context.Context, tenant, label string) error {
	if _, err := bk.Get(ctx, tenant, label); err != nil {
		return err
	}
	return bk.kv.Purge(ctx, keyOf(tenant, label))
}

// List returns every budget, fleet-wide ones first, then by tenant and
// label.
func (bk *Book) List(ctx context.Context) ([]Budget, error) {
	keys, err := bk.kv.ListKeys(ctx)
	if err != nil {
		return nil, err
	}
	var out []Budget
	for k := range keys.Keys() {
		e, err := bk.kv.Get(ctx, k)
		if err != nil {
			continue
		}
		if b, err := decode(e.Value()); err == nil {
			out = append(out, b)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Tenant != out[j].Tenant {
			return out[i].Tenant < out[j].Tenant
		}
		return out[i].Label < out[j].Label
	})
	return out, nil
}

// record writes the spend of a check when it changed anything, by
// compare-and-set on rev; it reports the budget as it stands and whether
// this call wrote it (false: unchanged, or another writer came first, whose
// budget it then reads back: a check racing the periodic one must not
// answer the state before both).
func (bk *Book) record(ctx context.Context, b Budget, rev uint64, spent float64, now time.Time) (Budget, bool, error) {
	next := b
	next.SpentUSD, next.CheckedAt = spent, now
	next.Exhausted = spent >= b.LimitUSD
	if next.Exhausted == b.Exhausted && math.Abs(next.SpentUSD-b.SpentUSD) < 1e-9 {
		return b, false, nil
	}
	data, _ := json.Marshal(next)
	if _, err := bk.kv.Update(ctx, keyOf(b.Tenant, b.Label), data, rev); err != nil {
		if jscas.Conflict(err) {
			cur, _, err := bk.get(ctx, b.Tenant, b.Label)
			if err != nil {
				return b, false, err
			}
			return cur, false, nil
		}
		return b, false, err
	}
	return next, true, nil
}
