package dispatcher_test

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"testing"

	"github.com/agentfleet/agentfleet/fleet/client"
	"github.com/agentfleet/agentfleet/fleet/dispatcher"
	"github.com/agentfleet/agentfleet/fleet/fleettest"
	"github.com/agentfleet/agentfleet/llm/pricing"
)

// TestUsageShowsUnpricedSpend: a session on a model without a price
// (the harness's claude-test) spends tokens at a cost of $0; the usage
// report lists it as unpriced, by model and in total, instead of letting
// it read as free. With the dispatcher's prices naming the model, it is
// priced (at $0 here) and listed no more.
func TestUsageShowsUnpricedSpend(t *testing.T) {
	t.Parallel()
	f := fleettest.Start(t, fleettest.Options{Workers: 1, SQLite: true})
	succeeded := f.WaitDone(f.Submit(fleettest.Spec("free", fleettest.Step{Text: "done"})))
	if succeeded.Error != "" {
		t.Fatalf("task %s %s", succeeded.State, succeeded.Error)
	}
	usage := func(prices map[string]pricing.Price, groupBy string) (rows, unpriced int, marked bool) {
		d, err := dispatcher.New(f.Store, f.Queue, dispatcher.Config{Prices: prices, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(d.Handler(dispatcher.APIOptions{}))
		defer srv.Close()
		c, err := client.New(srv.URL, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := c.Usage(context.Background(), client.UsageQuery{GroupBy: groupBy})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rep.Unpriced {
			if r.Key != "claude-test" || r.Sessions != 1 || r.Usage.InputTokens == 0 || r.CostUSD != 0 {
				t.Fatalf("unpriced row %+v", r)
			}
		}
		for _, r := range rep.Rows {
			marked = marked || r.Unpriced
		}
		return len(rep.Rows), len(rep.Unpriced), marked
	}
	if _, n, _ := usage(nil, ""); n != 1 {
		t.Fatalf("the total lists %d unpriced models, want claude-test", n)
	}
	if rows, n, marked := usage(nil, "model"); rows != 1 || n != 1 || !marked {
		t.Fatalf("by model: %d rows, %d unpriced, marked %v; want claude-test's row marked unpriced", rows, n, marked)
	}
	if _, n, marked := usage(map[string]pricing.Price{"claude-test": {}}, "model"); n != 0 || marked {
		t.Fatalf("a model the operator priced is still listed unpriced (%d, marked %v)", n, marked)
	}
}
