package dispatcher

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/agentfleet/agentfleet/fleet/dispatcher/webhook"
	"github.com/agentfleet/agentfleet/fleet/fleettest"
	"github.com/agentfleet/agentfleet/internal/testenv"
	"github.com/agentfleet/agentfleet/store"
)

// TestWebhookPostsATaskEnd: a task run by a worker ends, the dispatcher
// posts its end to a real receiver that checks the signature, and the
// API's delivery log shows the delivery.
func TestWebhookPostsATaskEnd(t *testing.T) {
	const secret = "whsec"
	var mu sync.Mutex
	var got []webhook.Payload
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if !webhook.Verify(secret, body, r.Header.Get(webhook.HeaderSignature)) {
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		var p webhook.Payload
		_ = json.Unmarshal(body, &p)
		mu.Lock()
		got = append(got, p)
		mu.Unlock()
	}))
	defer receiver.Close()
	f := fleettest.Start(t, fleettest.Options{Workers: 1, SQLite: true})
	d, err := New(f.Store, f.Queue, Config{Webhooks: webhook.Config{URLs: []string{receiver.URL}, Secret: secret,
		AllowPrivate: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- d.Run(ctx) }()
	defer func() { stop(); <-ran }() //nolint:errcheck // Run ends with the cancel; its error says only that
	select {
	case <-d.webhooks.Following():
	case <-time.After(testWait):
		t.Fatal("the webhook notifier never followed the events")
	}
	id := f.Submit(fleettest.Spec("hooked", fleettest.Step{Text: "finished"}))
	if task := f.WaitDone(id); task.State != store.TaskSucceeded {
		t.Fatalf("task %s", task.State)
	}
	testenv.Eventually(t, testWait, "the receiver got the task's end", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(got) == 1
	})
	if p := got[0]; p.TaskID != id.String() || p.End.State != store.TaskSucceeded || p.End.Result.FinalText != "finished" {
		t.Fatalf("payload %+v", p)
	}
	api := httptest.NewServer(d.Handler(APIOptions{Token: testToken}))
	defer api.Close()
	req, _ := http.NewRequest(http.MethodGet, api.URL+"/v1/webhooks/deliveries?task_id="+id.String(), nil)
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	var log struct {
		Deliveries []webhook.Delivery `json:"deliveries"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&log); err != nil || len(log.Deliveries) != 1 {
		t.Fatalf("log %+v: %v", log, err)
	}
	if d := log.Deliveries[0]; d.State != webhook.StateDelivered || d.Attempts != 1 || d.URL != receiver.URL || d.StatusCode != http.StatusOK {
		t.Fatalf("delivery %+v", d)
	}
}
