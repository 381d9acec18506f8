package dispatcher

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/agentfleet/agentfleet/internal/testenv"
	"github.com/agentfleet/agentfleet/store"
	"github.com/agentfleet/agentfleet/store/pgtest"
	"github.com/agentfleet/agentfleet/store/postgres"
)

// While the store is away the API answers 503 with Retry-After (not a 500
// internal error), and the Go client repeats a read after that delay, so a
// reader rides out a Postgres restart. The dispatcher's store_up gauge
// (and its log) follow the outage both ways.
func TestStoreOutageIs503WithRetryAfter(t *testing.T) {
	pg, dsn := pgtest.NewClusterWithDatabase(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*testWait)
	defer cancel()
	st, err := postgres.Open(ctx, postgres.Config{DSN: dsn})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	b := setupAPI(t, func(testing.TB) store.Store { return st })

	pg.Stop()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, b.srv.URL+"/v1/counts", nil)
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != "2" {
		t.Fatalf("with the store away: %d, Retry-After %q; want 503 with Retry-After 2", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	if up := gaugeValue(b.d.metrics.storeUp); up != 0 {
		t.Fatalf("agentfleet_dispatcher_store_up = %v after a 503, want 0", up)
	}

	read := make(chan error, 1)
	go func() { _, err := b.client.Counts(ctx); read <- err }()
	testenv.Eventually(t, testWait, "the client's read answered 503", func() bool {
		return answered503(b.d) >= 2
	})
	if err := pg.Start(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-read:
		if err != nil {
			t.Fatalf("the client's read after the store came back: %v", err)
		}
	case <-time.After(testWait):
		t.Fatal("the client's read did not return once the store was back")
	}
	testenv.Eventually(t, testWait, "store_up back to 1", func() bool { return gaugeValue(b.d.metrics.storeUp) == 1 })
}

// answered503 counts the API's 503 answers so far.
func answered503(d *Dispatcher) int {
	// The scrape-time task counts fail while the store is away; Gather
	// returns every other metric all the same.
	families, _ := d.Metrics().Registry.Gather()
	n := 0
	for _, mf := range families {
		if mf.GetName() != "agentfleet_api_request_duration_seconds" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "code" && l.GetValue() == "503" {
					n += int(m.GetHistogram().GetSampleCount())
				}
			}
		}
	}
	return n
}

// gaugeValue reads g.
func gaugeValue(g prometheus.Gauge) float64 {
	var m dto.Metric
	_ = g.Write(&m)
	return m.GetGauge().GetValue()
}
