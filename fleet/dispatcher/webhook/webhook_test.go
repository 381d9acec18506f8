package webhook_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/dispatcher/webhook"
	"github.com/agentfleet/agentfleet/internal/testenv"
	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/queue/natstest"
	"github.com/agentfleet/agentfleet/store"
)

func TestMain(m *testing.M) { testenv.VerifyTestMain(m) }

const secret = "whsec-test"

// receiver checks each delivery's signature; it answers 500 to the first
// failFirst attempts.
type receiver struct {
	mu        sync.Mutex
	failFirst int
	attempts  int
	payloads  []webhook.Payload
	badSig    int
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.attempts++
	if !webhook.Verify(secret, body, r.Header.Get(webhook.HeaderSignature)) {
		rc.badSig++
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	if rc.attempts <= rc.failFirst {
		http.Error(w, "not yet", http.StatusInternalServerError)
		return
	}
	var p webhook.Payload
	if err := json.Unmarshal(body, &p); err != nil || r.Header.Get(webhook.HeaderDelivery) != p.ID {
		http.Error(w, "bad payload", http.StatusBadRequest)
		return
	}
	rc.payloads = append(rc.payloads, p)
}

func TestTaskEndIsPostedSignedAndRetried(t *testing.T) {
	srv := natstest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	q, err := queue.Open(ctx, srv.Connect(t), queue.Config{})
	if err != nil {
		t.Fatal(err)
	}
	good, flaky, down := &receiver{}, &receiver{failFirst: 2}, &receiver{failFirst: 1000}
	var urls []string
	for _, rc := range []*receiver{good, flaky, down} {
		ts := httptest.NewServer(rc)
		defer ts.Close()
		urls = append(urls, ts.URL)
	}
	// A receiver at an internal address the operator did not allow
	// (127.0.0.2; only 127.0.0.1 is) is never reached.
	internal := &receiver{}
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Fatal(err)
	}
	its := httptest.NewUnstartedServer(internal)
	_ = its.Listener.Close()
	its.Listener = ln
	its.Start()
	defer its.Close()
	urls = append(urls, its.URL)
	n, err := webhook.New(webhook.Config{URLs: urls, Secret: secret, MaxAttempts: 3, Backoff: 10 * time.Millisecond,
		AllowPrivate: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}, q, nil)
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	ran := make(chan error, 1)
	go func() { ran <- n.Run(runCtx) }()
	defer func() { stop(); <-ran }() //nolint:errcheck // Run ends with the cancel; its error says only that

	pub, err := q.NewEventPublisher()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = pub.Close(ctx) }()
	task := uuid.New()
	end, _ := json.Marshal(fleet.SessionEndData{State: store.TaskSucceeded, Result: fleet.TaskResult{Success: true, FinalText: "all done"}})
	// The notifier follows new events only: publish once it follows, and
	// only once, so each receiver sees one delivery.
	select {
	case <-n.Following():
	case <-ctx.Done():
		t.Fatal("the notifier never started following events")
	}
	if err := pub.PublishConfirmed(ctx, queue.Event{ID: uuid.NewString(), Kind: fleet.KindSessionEnd, SessionID: task.String(),
		TaskID: task.String(), Seq: 1, Data: end}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 20*time.Second, "every delivery settled", func() bool {
		for _, d := range n.Deliveries(task.String(), 0) {
			if d.State == webhook.StatePending {
				return false
			}
		}
		return len(n.Deliveries(task.String(), 0)) >= 4
	})
	p := good.payloads[0]
	if p.TaskID != task.String() || p.End.State != store.TaskSucceeded || p.End.Result.FinalText != "all done" || p.Event != webhook.EventTaskEnded {
		t.Fatalf("payload = %+v", p)
	}
	states := map[string]webhook.Delivery{}
	for _, d := range n.Deliveries(task.String(), 0) {
		states[d.URL] = d
	}
	if d := states[urls[0]]; d.State != webhook.StateDelivered || d.Attempts != 1 {
		t.Errorf("good: %+v", d)
	}
	if d := states[urls[1]]; d.State != webhook.StateDelivered || d.Attempts != 3 || d.StatusCode != http.StatusOK {
		t.Errorf("flaky: %+v, want delivered at the third attempt", d)
	}
	if d := states[urls[2]]; d.State != webhook.StateFailed || d.Attempts != 3 || d.StatusCode != http.StatusInternalServerError || d.Error == "" {
		t.Errorf("down: %+v, want failed after 3 attempts", d)
	}
	internal.mu.Lock()
	reached := len(internal.payloads)
	internal.mu.Unlock()
	if d := states[urls[3]]; d.State != webhook.StateFailed || !strings.Contains(d.Error, "outbound_allow_private") || reached != 0 {
		t.Errorf("internal: %+v (%d payloads), want refused before connecting", d, reached)
	}
	for _, rc := range []*receiver{good, flaky, down} {
		if rc.badSig != 0 {
			t.Errorf("%d deliveries with a bad signature", rc.badSig)
		}
	}
}

// A tenant's receiver hears its own tasks' ends only; a fleet-wide one
// hears every tenant's.
func TestTenantReceiversHearTheirTenantOnly(t *testing.T) {
	srv := natstest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	q, err := queue.Open(ctx, srv.Connect(t), queue.Config{})
	if err != nil {
		t.Fatal(err)
	}
	all, teamA := &receiver{}, &receiver{}
	allSrv, aSrv := httptest.NewServer(all), httptest.NewServer(teamA)
	defer allSrv.Close()
	defer aSrv.Close()
	n, err := webhook.New(webhook.Config{URLs: []string{allSrv.URL}, TenantURLs: map[string][]string{"team-a": {aSrv.URL}},
		Secret: secret, AllowPrivate: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}, q, nil)
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	ran := make(chan error, 1)
	go func() { ran <- n.Run(runCtx) }()
	defer func() { stop(); <-ran }() //nolint:errcheck // Run ends with the cancel; its error says only that
	select {
	case <-n.Following():
	case <-ctx.Done():
		t.Fatal("the notifier never started following events")
	}
	pub, err := q.NewEventPublisher()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = pub.Close(ctx) }()
	end, _ := json.Marshal(fleet.SessionEndData{State: store.TaskSucceeded})
	tasks := map[string]string{}
	for _, tenant := range []string{"team-b", "team-a"} {
		task := uuid.NewString()
		tasks[tenant] = task
		if err := pub.PublishConfirmed(ctx, queue.Event{ID: uuid.NewString(), Kind: fleet.KindSessionEnd, Tenant: tenant,
			SessionID: task, TaskID: task, Seq: 1, Data: end}); err != nil {
			t.Fatal(err)
		}
	}
	testenv.Eventually(t, 20*time.Second, "the fleet-wide receiver hears both ends", func() bool {
		all.mu.Lock()
		defer all.mu.Unlock()
		return len(all.payloads) == 2
	})
	testenv.Eventually(t, 20*time.Second, "team-a's receiver hears team-a's end", func() bool {
		teamA.mu.Lock()
		defer teamA.mu.Unlock()
		return len(teamA.payloads) >= 1
	})
	teamA.mu.Lock()
	defer teamA.mu.Unlock()
	if len(teamA.payloads) != 1 || teamA.payloads[0].TaskID != tasks["team-a"] {
		t.Fatalf("team-a's receiver heard %+v, want team-a's task %s only", teamA.payloads, tasks["team-a"])
	}
}

func TestSignAndVerify(t *testing.T) {
	body := []byte(`{"a":1}`)
	sig := webhook.Sign("k", body)
	if !webhook.Verify("k", body, sig) || webhook.Verify("k", []byte(`{"a":2}`), sig) || webhook.Verify("other", body, sig) {
		t.Fatal("signature does not bind the body and the key")
	}
	// A value computed by hand: printf '{"a":1}' | openssl dgst -sha256 -hmac k
	if sig != "sha256=c3a92ff9e274cdcce27a58c15a78ec6dcbbdbd0038a87e7a11baef2028fd8bff" {
		t.Fatalf("sig = %s", sig)
	}
}

func TestConfigValidate(t *testing.T) {
	if err := (webhook.Config{URLs: []string{"https://u:p@hooks.example/"}, Secret: "s"}).WithDefaults().Validate(); err == nil ||
		!strings.Contains(err.Error(), "user info") {
		t.Fatalf("a URL with user info: %v", err)
	}
	err := webhook.Config{URLs: []string{"ftp://x"}}.WithDefaults().Validate()
	if err == nil || !strings.Contains(err.Error(), "webhook_secret is required") || !strings.Contains(err.Error(), "webhook_urls[0]") {
		t.Fatalf("err = %v", err)
	}
}
