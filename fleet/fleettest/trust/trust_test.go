package trust_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/uuid"
	"github.com/nats-io/nats.go"

	"github.com/agentfleet/agentfleet/agent"
	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/api"
	"github.com/agentfleet/agentfleet/fleet/client"
	"github.com/agentfleet/agentfleet/fleet/fleettest"
	"github.com/agentfleet/agentfleet/internal/browsertest"
	"github.com/agentfleet/agentfleet/internal/testenv"
	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/store"
)

// wait bounds every wait of the suite; each is on a condition.
const wait = 2 * time.Minute

// approvalRequested is the kind of the event a parked call publishes.
const approvalRequested = string(agent.EventApprovalRequested)

// TestTrustBoundary proves each line of issue 29's "Done when" on one
// fleet (see the package doc for what runs). The subtests run in order
// on the same tasks: B1 (tenant B's) and A1, A2 (tenant A's) each wait
// for the approval of a destructive command.
//
//nolint:maintidx // one scenario in order over one fleet; split, each part would rebuild it
func TestTrustBoundary(t *testing.T) {
	bin := browsertest.Chromium(t, "the trust boundary suite, whose dashboard part needs it")
	s := start(t)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()

	// B's first, so that on a stream of every tenant B's events come
	// before A's: a filter that let them through would show them first.
	taskB, callB := s.submitPending(t, "b-approver", destructive("b1"))
	taskA, callA := s.submitPending(t, "a-submitter", destructive("a1"))
	taskA2, callA2 := s.submitPending(t, "a-submitter", destructive("a2"))
	for id, tenant := range map[uuid.UUID]string{taskA: tenantA, taskA2: tenantA, taskB: tenantB} {
		if got := s.fleet.Task(id).Tenant; got != tenant {
			t.Fatalf("task %s is in tenant %q, want %q (its submitter's)", id, got, tenant)
		}
	}
	viewer := s.clients["a-viewer"]

	t.Run("A's viewer cannot see, stream or count B's tasks", func(t *testing.T) {
		if _, err := viewer.Get(ctx, taskA); err != nil {
			t.Fatalf("A's viewer reads A's task: %v", err)
		}
		for what, call := range map[string]func() error{
			"get":         func() error { _, err := viewer.Get(ctx, taskB); return err },
			"tree":        func() error { _, err := viewer.Tree(ctx, taskB); return err },
			"sessions":    func() error { _, err := viewer.Sessions(ctx, taskB); return err },
			"turns":       func() error { _, err := viewer.Turns(ctx, taskB, 0); return err },
			"permissions": func() error { _, err := viewer.Permissions(ctx, taskB); return err },
			"artifacts":   func() error { _, err := viewer.Artifacts(ctx, taskB); return err },
			"stream": func() error {
				st, err := viewer.Events(ctx, taskB, client.StreamOptions{})
				if st != nil {
					_ = st.Close()
				}
				return err
			},
		} {
			wantStatus(t, "A's viewer: "+what+" of B's task", call(), http.StatusNotFound)
		}
		// A stream ticket carries its principal: it opens A's stream only.
		for id, want := range map[uuid.UUID]int{taskB: http.StatusNotFound, taskA: http.StatusOK} {
			tk, err := viewer.StreamTicket(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if code := status(t, http.MethodGet, s.base+"/v1/tasks/"+id.String()+"/events?ticket="+tk.Ticket, "", nil); code != want {
				t.Errorf("A's viewer's stream ticket on task %s: %d, want %d", id, code, want)
			}
		}
		page, err := viewer.List(ctx, client.ListFilter{})
		if err != nil || len(page.Tasks) != 2 || !listed(page, taskA) || !listed(page, taskA2) {
			t.Fatalf("A's viewer lists %d tasks (%v), want A's two", len(page.Tasks), err)
		}
		if page, err := viewer.List(ctx, client.ListFilter{Tenant: tenantB}); err == nil && len(page.Tasks) != 0 {
			t.Fatalf("A's viewer lists %d tasks of %s", len(page.Tasks), tenantB)
		}
		counts, err := viewer.Counts(ctx)
		if err != nil || total(counts) != 2 || counts[store.TaskWaiting] != 2 {
			t.Fatalf("A's viewer counts %v (%v), want A's two waiting tasks", counts, err)
		}
		if all, err := s.clients["admin"].Counts(ctx); err != nil || total(all) != 3 {
			t.Fatalf("the admin counts %v (%v), want both tenants' three tasks", all, err)
		}
		if st, err := viewer.Stats(ctx); err != nil || total(st.Counts) != 2 {
			t.Fatalf("A's viewer's stats count %v (%v), want A's two tasks", st.Counts, err)
		}
		if inB, err := viewer.CountsFiltered(ctx, client.ListFilter{Tenant: tenantB}); err != nil || total(inB) != 0 {
			t.Fatalf("A's viewer counts %v in %s (%v), want none", inB, tenantB, err)
		}
		// The fleet-wide stream: B's approval request was published
		// before A's, so a stream carrying B's events would show it first.
		got := streamUntil(t, ctx, viewer, func(e queue.Event) bool { return e.Kind == approvalRequested && e.TaskID == taskA2.String() })
		for _, e := range got {
			if e.Tenant != tenantA || e.TaskID == taskB.String() {
				t.Fatalf("A's viewer's fleet-wide stream carries %s of task %s in tenant %s", e.Kind, e.TaskID, e.Tenant)
			}
		}
		streamUntil(t, ctx, s.clients["admin"], func(e queue.Event) bool { return e.Kind == approvalRequested && e.TaskID == taskB.String() })
	})

	t.Run("A's viewer cannot approve", func(t *testing.T) {
		approve := api.ApprovalRequest{Decision: api.DecisionApprove}
		_, err := viewer.Decide(ctx, taskA, callA.CallID, approve)
		wantStatus(t, "A's viewer approves A's call", err, http.StatusForbidden)
		// On B's call the role is refused before the task is looked up:
		// the same 403 as for a task that does not exist, so it tells
		// nothing of B's.
		_, errB := viewer.Decide(ctx, taskB, callB.CallID, approve)
		wantStatus(t, "A's viewer approves B's call", errB, http.StatusForbidden)
		_, errNone := viewer.Decide(ctx, uuid.New(), callB.CallID, approve)
		wantStatus(t, "A's viewer approves a call of no task", errNone, http.StatusForbidden)
		if strings.ReplaceAll(errB.Error(), taskB.String(), "") != strings.ReplaceAll(errNone.Error(), taskB.String(), "") || strings.Contains(errB.Error(), tenantB) {
			t.Fatalf("the refusals differ, telling B's task from none: %q and %q", errB, errNone)
		}
		stillPending(t, s, taskA, callA)
	})

	t.Run("a worker's NATS user cannot publish an approval", func(t *testing.T) {
		violations := make(chan error, 16)
		nc := s.fleet.ConnectAs(t, string(queue.RoleWorker), nats.PermissionErrOnSubscribe(true), nats.ErrorHandler(violationsTo(violations)))
		q, err := queue.Open(ctx, nc, s.queueConfig())
		if err != nil {
			t.Fatalf("the worker's user opens the queue: %v", err)
		}
		approvals := q.Subjects().Approvals()
		forged := queue.ControlRequest{Op: queue.OpApprove, TaskID: taskA.String(), CallID: callA.CallID, By: "a-approver", Reason: "forged"}
		short, cancelShort := context.WithTimeout(ctx, 2*time.Second)
		defer cancelShort()
		if reply, err := q.AnswerApproval(short, forged); err == nil {
			t.Fatalf("a worker's approval was answered: %+v", reply)
		}
		violation(t, violations, "Publish", approvals)
		// Nor may it serve the subject in the dispatchers' place.
		if _, err := nc.QueueSubscribeSync(approvals, "dispatchers"); err != nil {
			t.Fatal(err)
		}
		violation(t, violations, "Subscription", approvals)
		// The dispatcher's user is heard on the same subject: its request
		// for a call that is not pending gets the dispatcher's refusal.
		_, err = s.fleet.Queue.AnswerApproval(ctx, queue.ControlRequest{Op: queue.OpApprove, TaskID: taskA.String(), CallID: "no-such-call"})
		if !errors.Is(err, queue.ErrControlRefused) {
			t.Fatalf("the dispatcher's user on the approvals subject: %v, want the dispatcher's refusal", err)
		}
		stillPending(t, s, taskA, callA)
	})

	t.Run("A's approver approves only A's calls and is recorded", func(t *testing.T) {
		approver := s.clients["a-approver"]
		approve := api.ApprovalRequest{Decision: api.DecisionApprove}
		_, err := approver.Decide(ctx, taskB, callB.CallID, approve)
		wantStatus(t, "A's approver approves B's call", err, http.StatusNotFound)
		_, err = approver.Decide(ctx, taskA, callA.CallID, api.ApprovalRequest{Decision: api.DecisionApprove, By: "someone-else"})
		wantStatus(t, "an approval naming another approver", err, http.StatusBadRequest)
		if _, err := approver.Decide(ctx, taskA, callA.CallID, approve); err != nil {
			t.Fatalf("A's approver approves A's call: %v", err)
		}
		succeeded(t, s, taskA, "ran-a1")
		answeredBy(t, s, taskA, "token:"+s.tokens["a-approver"].ID)
		log, err := s.clients["admin"].Audit(ctx, client.AuditFilter{Action: "approval.approve", Tenant: tenantA})
		if err != nil || len(log.Entries) != 1 {
			t.Fatalf("A's approvals in the audit log: %+v (%v), want one", log.Entries, err)
		}
		if e := log.Entries[0]; e.Principal != "token:"+s.tokens["a-approver"].ID || e.Status != http.StatusOK || e.Target != taskA.String()+"/"+callA.CallID {
			t.Fatalf("the audit entry of the approval: %+v", e)
		}
		// B's approver answers B's call, and not A's.
		_, err = s.clients["b-approver"].Decide(ctx, taskA2, callA2.CallID, approve)
		wantStatus(t, "B's approver approves A's call", err, http.StatusNotFound)
		if _, err := s.clients["b-approver"].Decide(ctx, taskB, callB.CallID, approve); err != nil {
			t.Fatalf("B's approver approves B's call: %v", err)
		}
		succeeded(t, s, taskB, "ran-b1")
		answeredBy(t, s, taskB, "token:"+s.tokens["b-approver"].ID)
		stillPending(t, s, taskA2, callA2)
	})

	t.Run("an observer's NATS user subscribes to its tenant's events only", func(t *testing.T) {
		events := s.fleet.Queue.Subjects()
		// B's task ran while the observer was subscribed: its events are
		// in EVENTS, on B's subjects.
		if ok, err := s.fleet.Queue.HasEvent(ctx, taskB.String(), taskB.String(), approvalRequested); err != nil || !ok {
			t.Fatalf("B's approval request in EVENTS: %v %v", ok, err)
		}
		var seenA, seenA2 bool
		for !seenA || !seenA2 {
			m, err := s.observed.NextMsg(time.Until(deadline(ctx)))
			if err != nil {
				t.Fatalf("A's observer, after A's events (A1 %v, A2 %v): %v", seenA, seenA2, err)
			}
			var e queue.Event
			if err := json.Unmarshal(m.Data, &e); err != nil {
				t.Fatalf("event on %s: %v", m.Subject, err)
			}
			if e.Tenant != tenantA || e.TaskID == taskB.String() || !strings.HasPrefix(m.Subject, strings.TrimSuffix(events.TenantEvents(tenantA), ">")) {
				t.Fatalf("A's observer received %s of task %s (tenant %s) on %s", e.Kind, e.TaskID, e.Tenant, m.Subject)
			}
			seenA = seenA || (e.TaskID == taskA.String() && e.Kind == string(agent.EventSessionEnd))
			seenA2 = seenA2 || (e.TaskID == taskA2.String() && e.Kind == approvalRequested)
		}
		for _, subject := range []string{events.TenantEvents(tenantB), events.AllEvents()} {
			sub, err := s.observer.SubscribeSync(subject)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := sub.NextMsg(wait); !errors.Is(err, nats.ErrPermissionViolation) {
				t.Fatalf("A's observer subscribes to %s: %v, want a permission violation", subject, err)
			}
			violation(t, s.observerViolations, "Subscription", subject)
		}
		for _, subject := range []string{events.Event(tenantA, taskA.String(), taskA.String(), "FORGED"), events.Approvals(), "$JS.API.STREAM.INFO.EVENTS"} {
			if err := s.observer.Publish(subject, []byte("{}")); err != nil {
				t.Fatal(err)
			}
			violation(t, s.observerViolations, "Publish", subject)
		}
	})

	t.Run("the dashboard shows who is logged in and hides what the role may not do", func(t *testing.T) {
		vera := browsertest.New(t, bin, s.base, wait)
		vera.LoginWithGitea(t, "vera", password)
		if name, tenant, role := vera.Text(t, "#whoami-name"), vera.Text(t, "#whoami-tenant"), vera.Text(t, "#whoami-role"); name != "Vera Viewer" || tenant != tenantA || role != "viewer" {
			t.Fatalf("vera's dashboard shows %q in %q as %q, want Vera Viewer in %s as viewer", name, tenant, role, tenantA)
		}
		vera.Run(t, "vera's task list holds A's tasks",
			chromedp.WaitVisible(chromedp.CSS(`#task-list .task[data-id="`+taskA.String()+`"]`)),
			chromedp.WaitVisible(chromedp.CSS(`#task-list .task[data-id="`+taskA2.String()+`"]`)))
		if n := eval[int](t, vera, "counting B's task in vera's list", `document.querySelectorAll('#task-list .task[data-id="`+taskB.String()+`"]').length`); n != 0 {
			t.Fatalf("vera's task list shows B's task %d times", n)
		}
		vera.Run(t, "vera sees A's pending call without the buttons to answer it",
			chromedp.Navigate(s.base+"/#task="+taskA2.String()),
			chromedp.WaitVisible(chromedp.CSS(`#detail[data-state="waiting"]`)),
			chromedp.WaitVisible(chromedp.CSS(`#detail-approvals .approval .not-yours`)),
			chromedp.WaitNotVisible(chromedp.CSS(`#cancel-button`)),
			chromedp.WaitNotVisible(chromedp.CSS(`#submit-box`)))
		if n := eval[int](t, vera, "counting vera's approval buttons", `document.querySelectorAll('#detail-approvals button').length`); n != 0 {
			t.Fatalf("vera's page shows %d approval buttons, want none", n)
		}
		// Her session, not the page, is what the API judges: the calls the
		// page would make without its hiding are refused.
		if code := fetchStatus(t, vera, "GET", "/v1/tasks/"+taskB.String(), ""); code != http.StatusNotFound {
			t.Fatalf("vera's session reads B's task: %d, want 404", code)
		}
		if code := fetchStatus(t, vera, "POST", "/v1/tasks/"+taskA2.String()+"/approvals/"+callA2.CallID, `{"decision":"approve"}`); code != http.StatusForbidden {
			t.Fatalf("vera's session approves A's call: %d, want 403", code)
		}
		stillPending(t, s, taskA2, callA2)

		ada := browsertest.New(t, bin, s.base, wait)
		ada.LoginWithGitea(t, "ada", password)
		if name, role := ada.Text(t, "#whoami-name"), ada.Text(t, "#whoami-role"); name != "Ada Approver" || role != "approver" {
			t.Fatalf("ada's dashboard shows %q as %q, want Ada Approver as approver", name, role)
		}
		adaID := eval[string](t, ada, "ada's principal", `fetch("/v1/whoami").then(r => r.json()).then(w => w.id)`)
		if !strings.HasPrefix(adaID, "oidc:") {
			t.Fatalf("ada's principal is %q, want an oidc: one", adaID)
		}
		if code := fetchStatus(t, ada, "GET", "/v1/tasks/"+taskB.String(), ""); code != http.StatusNotFound {
			t.Fatalf("ada's session reads B's task: %d, want 404", code)
		}
		ada.Run(t, "ada approves A's pending call with the dashboard's button",
			chromedp.Navigate(s.base+"/#task="+taskA2.String()),
			chromedp.WaitVisible(chromedp.CSS(`#detail[data-state="waiting"]`)),
			chromedp.WaitVisible(chromedp.CSS(`#detail-approvals .approval button.approve`)),
			chromedp.Click(chromedp.CSS(`#detail-approvals .approval button.approve`)))
		succeeded(t, s, taskA2, "ran-a2")
		answeredBy(t, s, taskA2, adaID)
	})

	t.Run("dev mode refuses text/plain and cross-origin POSTs", func(t *testing.T) {
		body, _ := json.Marshal(fleettest.Spec("from a web page", fleettest.Step{Text: "done"}))
		before := total(counts(t, s))
		for _, c := range []struct {
			what string
			hdr  map[string]string
			want int
		}{
			{"text/plain", map[string]string{"Content-Type": "text/plain"}, http.StatusUnsupportedMediaType},
			{"a form", map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, http.StatusUnsupportedMediaType},
			{"another origin", map[string]string{"Content-Type": "application/json", "Origin": "http://evil.example"}, http.StatusForbidden},
			{"another site", map[string]string{"Content-Type": "application/json", "Sec-Fetch-Site": "cross-site"}, http.StatusForbidden},
			{"another port of this host", map[string]string{"Content-Type": "application/json", "Sec-Fetch-Site": "same-site"}, http.StatusForbidden},
			{"a rebound name", map[string]string{"Content-Type": "application/json", "Host": "evil.example"}, http.StatusMisdirectedRequest},
		} {
			if code := status(t, http.MethodPost, s.devBase+"/v1/tasks", string(body), c.hdr); code != c.want {
				t.Errorf("dev mode answers a POST from %s with %d, want %d", c.what, code, c.want)
			}
		}
		// A page of another origin, in a real browser, posts a task the
		// way a form can: text/plain, no preflight, no credentials.
		page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			_, _ = fmt.Fprintf(w, `<!doctype html><body><script>
fetch(%q, {method: "POST", mode: "no-cors", headers: {"Content-Type": "text/plain"}, body: %q})
  .finally(() => { document.body.dataset.sent = "1"; });
</script></body>`, s.devBase+"/v1/tasks", body)
		}))
		defer page.Close()
		b := browsertest.New(t, bin, page.URL, wait)
		b.Run(t, "a page of another origin posts to dev mode", chromedp.Navigate(page.URL), chromedp.WaitVisible(chromedp.CSS(`body[data-sent="1"]`)))
		var fromPage seenRequest
		testenv.Eventually(t, wait, "dev mode to see the page's POST", func() bool {
			for _, r := range s.devLog.requests() {
				if r.method == http.MethodPost && r.origin == page.URL {
					fromPage = r
					return true
				}
			}
			return false
		})
		if fromPage.status != http.StatusForbidden || fromPage.fetchSite == "" {
			t.Errorf("dev mode answered the page's POST (Sec-Fetch-Site %q, Content-Type %q) with %d, want 403",
				fromPage.fetchSite, fromPage.contentType, fromPage.status)
		}
		if after := total(counts(t, s)); after != before {
			t.Fatalf("refused POSTs made %d tasks", after-before)
		}
		// The same POST as a program sends it (JSON, no Origin) is served:
		// the refusals above are the guard's, not a broken face.
		if code := status(t, http.MethodPost, s.devBase+"/v1/tasks", string(body), map[string]string{"Content-Type": "application/json"}); code != http.StatusCreated {
			t.Fatalf("dev mode answers a program's POST with %d, want 201", code)
		}
		if after := total(counts(t, s)); after != before+1 {
			t.Fatalf("the program's POST made %d tasks, want 1", after-before)
		}
	})

	t.Run("a revoked or expired token is refused at once", func(t *testing.T) {
		admin := s.clients["admin"]
		tok, err := admin.CreateToken(ctx, api.TokenRequest{Name: "to-revoke", Grants: map[string]string{tenantA: "viewer"}})
		if err != nil {
			t.Fatal(err)
		}
		c := s.client(t, tok.Token)
		if _, err := c.Whoami(ctx); err != nil {
			t.Fatalf("the fresh token: %v", err)
		}
		if _, err := admin.RevokeToken(ctx, tok.ID); err != nil {
			t.Fatal(err)
		}
		_, err = c.Whoami(ctx)
		wantRefused(t, "the revoked token, on the next request", err, "revoked")
		// Dev mode's face asks the same store.
		if code := status(t, http.MethodGet, s.devBase+"/v1/whoami", "", map[string]string{"Authorization": "Bearer " + tok.Token}); code != http.StatusUnauthorized {
			t.Fatalf("the revoked token on dev mode's face: %d, want 401", code)
		}

		short, err := admin.CreateToken(ctx, api.TokenRequest{Name: "short-lived", Grants: map[string]string{tenantA: "viewer"}, ExpiresIn: "2s"})
		if err != nil {
			t.Fatal(err)
		}
		c = s.client(t, short.Token)
		if _, err := c.Whoami(ctx); err != nil {
			t.Fatalf("the short-lived token before its expiry: %v", err)
		}
		// Every request after the expiry is refused: not one is served
		// from a cache of the token.
		var refusal error
		testenv.Eventually(t, wait, "the short-lived token to expire", func() bool {
			sent := time.Now()
			_, err := c.Whoami(ctx)
			if err == nil && sent.After(short.ExpiresAt) {
				t.Fatalf("the token was accepted at %s, after its expiry at %s", sent.Format(time.StampMilli), short.ExpiresAt.Format(time.StampMilli))
			}
			refusal = err
			return err != nil
		})
		wantRefused(t, "the expired token", refusal, "expired")
		if time.Now().Before(short.ExpiresAt) {
			t.Fatalf("the token was refused before its expiry at %s", short.ExpiresAt)
		}
	})
}

// wantStatus fails unless err is an API error of code.
func wantStatus(t *testing.T, what string, err error, code int) {
	t.Helper()
	var ae *client.APIError
	if !errors.As(err, &ae) || ae.Status != code {
		t.Fatalf("%s: %v, want a %d", what, err, code)
	}
}

// wantRefused fails unless err is a 401 whose message says why.
func wantRefused(t *testing.T, what string, err error, why string) {
	t.Helper()
	var ae *client.APIError
	if !errors.As(err, &ae) || ae.Status != http.StatusUnauthorized || !strings.Contains(ae.Message, why) {
		t.Fatalf("%s: %v, want a 401 saying %s", what, err, why)
	}
}

// status sends a request and returns its status code (the body unread).
func status(t *testing.T, method, url, body string, hdr map[string]string) int {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close() // unread: an event stream's body never ends
	return resp.StatusCode
}

// fetchStatus makes the request from the page, with its session cookie.
func fetchStatus(t *testing.T, b *browsertest.Browser, method, path, body string) int {
	t.Helper()
	init := fmt.Sprintf(`{method: %q}`, method)
	if body != "" {
		init = fmt.Sprintf(`{method: %q, headers: {"Content-Type": "application/json"}, body: %q}`, method, body)
	}
	return eval[int](t, b, method+" "+path+" from the page", fmt.Sprintf(`fetch(%q, %s).then(r => r.status)`, path, init))
}

// violation waits for a permission violation of what (Publish,
// Subscription) naming subject.
func violation(t *testing.T, violations <-chan error, what, subject string) {
	t.Helper()
	select {
	case err := <-violations:
		if !strings.Contains(err.Error(), what) || !strings.Contains(err.Error(), subject) {
			t.Fatalf("violation %q, want one for %s to %s", err, what, subject)
		}
	case <-time.After(wait):
		t.Fatalf("no permission violation for %s to %s", what, subject)
	}
}

// stillPending fails unless task id still waits for call, unanswered.
func stillPending(t *testing.T, s *suite, id uuid.UUID, call fleet.PendingApproval) {
	t.Helper()
	task := s.fleet.Task(id)
	wf, err := fleet.DecodeWaitingFor(task.WaitingFor)
	if task.State != store.TaskWaiting || err != nil || len(wf.Approvals) != 1 || wf.Approvals[0].CallID != call.CallID {
		t.Fatalf("task %s is %s waiting for %+v (%v), want still waiting for call %s", id, task.State, wf.Approvals, err, call.CallID)
	}
}

// succeeded waits until the task ends and fails unless it succeeded
// with the approved command's output in its answer.
func succeeded(t *testing.T, s *suite, id uuid.UUID, output string) {
	t.Helper()
	done := s.fleet.WaitDone(id)
	if done.State != store.TaskSucceeded {
		t.Fatalf("task %s ended %s: %s", id, done.State, done.Error)
	}
	if res := fleettest.Result(t, done); !strings.Contains(res.FinalText, output) {
		t.Fatalf("task %s answered %q, want the approved command's output %q", id, res.FinalText, output)
	}
}

// answeredBy fails unless the task's answered call records principal as
// the approver.
func answeredBy(t *testing.T, s *suite, id uuid.UUID, principal string) {
	t.Helper()
	perms, err := s.clients["admin"].Permissions(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range perms.Records {
		if r.Answer != nil {
			if !r.Answer.Approved || r.Answer.By != principal {
				t.Fatalf("task %s's call was answered by %q (approved %v), want approved by %s", id, r.Answer.By, r.Answer.Approved, principal)
			}
			return
		}
	}
	t.Fatalf("task %s records no answer: %+v", id, perms.Records)
}

// streamUntil reads c's fleet-wide event stream from its start until an
// event matches stop, and returns the events read.
func streamUntil(t *testing.T, ctx context.Context, c *client.Client, stop func(queue.Event) bool) []queue.Event {
	t.Helper()
	st, err := c.AllEvents(ctx, client.StreamOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = st.Close() }()
	var got []queue.Event
	for {
		ev, err := st.Next()
		if err != nil {
			t.Fatalf("the fleet-wide stream, after %d events: %v", len(got), err)
		}
		got = append(got, ev.Event)
		if stop(ev.Event) {
			return got
		}
	}
}

func listed(page api.TaskList, id uuid.UUID) bool {
	for _, task := range page.Tasks {
		if task.ID == id {
			return true
		}
	}
	return false
}

func total(counts map[store.TaskState]int64) int64 {
	var n int64
	for _, c := range counts {
		n += c
	}
	return n
}

// counts are the admin's counts of every tenant's tasks.
func counts(t *testing.T, s *suite) map[store.TaskState]int64 {
	t.Helper()
	c, err := s.clients["admin"].Counts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func deadline(ctx context.Context) time.Time {
	d, _ := ctx.Deadline()
	return d
}
