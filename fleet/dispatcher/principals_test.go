package dispatcher

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/api"
	"github.com/agentfleet/agentfleet/fleet/client"
	"github.com/agentfleet/agentfleet/internal/identity"
	"github.com/agentfleet/agentfleet/internal/testenv"
	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/store"
)

// TestRouteAccessCoversRoutes: every route says who may use it, and the
// table names no route that is not served.
func TestRouteAccessCoversRoutes(t *testing.T) {
	routes := (&handlers{}).routes()
	for pattern := range routes {
		if _, ok := routeAccess[pattern]; !ok {
			t.Errorf("%s has no entry in routeAccess", pattern)
		}
	}
	for pattern, acc := range routeAccess {
		if _, ok := routes[pattern]; !ok {
			t.Errorf("routeAccess names %s, which is not served", pattern)
		}
		mutating := !strings.HasPrefix(pattern, "GET ") && pattern != "/v1/" && pattern != "POST /v1/stream-tickets"
		if mutating != (acc.action != "") {
			t.Errorf("%s: audit action %q; every mutating route and only those has one", pattern, acc.action)
		}
	}
}

// tenantFleet is an API with principals in two tenants: a token of each
// role in team-a and a submitter in team-b.
type tenantFleet struct {
	*apiBundle
	tokens  map[string]api.CreatedToken // "viewer", "submitter", "approver", "admin", "submitter2", "b-submitter"
	clients map[string]*client.Client
}

func setupTenants(t *testing.T, mk storeMaker) *tenantFleet {
	t.Helper()
	f := &tenantFleet{apiBundle: setupAPI(t, mk), tokens: map[string]api.CreatedToken{}, clients: map[string]*client.Client{}}
	for name, grant := range map[string][2]string{
		"viewer": {"team-a", "viewer"}, "submitter": {"team-a", "submitter"}, "submitter2": {"team-a", "submitter"},
		"approver": {"team-a", "approver"}, "admin": {"team-a", "admin"}, "b-submitter": {"team-b", "submitter"},
	} {
		f.token(t, name, map[string]string{grant[0]: grant[1]})
	}
	return f
}

// token creates a token with the bootstrap token and a client of it.
func (f *tenantFleet) token(t *testing.T, name string, grants map[string]string) *client.Client {
	t.Helper()
	tok, err := f.client.CreateToken(context.Background(), api.TokenRequest{Name: name, Grants: grants})
	if err != nil {
		t.Fatalf("creating token %s: %v", name, err)
	}
	if !strings.HasPrefix(tok.Token, TokenPrefix) || tok.CreatedBy != "bootstrap" || tok.ExpiresAt.IsZero() {
		t.Fatalf("created token %+v", tok)
	}
	c, err := client.New(f.srv.URL, tok.Token, nil)
	if err != nil {
		t.Fatal(err)
	}
	f.tokens[name], f.clients[name] = tok, c
	return c
}

func (f *tenantFleet) submitAs(t *testing.T, who string, spec fleet.TaskSpec) store.Task {
	t.Helper()
	sub, err := f.clients[who].Submit(context.Background(), spec)
	if err != nil {
		t.Fatalf("%s submits: %v", who, err)
	}
	task, err := f.st.GetTask(context.Background(), store.GetTaskParams{ID: sub.Task.ID})
	if err != nil {
		t.Fatal(err)
	}
	return task
}

func wantStatus(t *testing.T, what string, err error, code int) {
	t.Helper()
	var ae *client.APIError
	if !errors.As(err, &ae) || ae.Status != code {
		t.Fatalf("%s: %v, want a %d", what, err, code)
	}
}

// waitForApproval parks task id, as a worker would, on a destructive call.
func waitForApproval(t *testing.T, st store.Store, id uuid.UUID) fleet.PendingApproval {
	t.Helper()
	runTask(t, st, id)
	now := time.Now().UTC()
	pa := fleet.PendingApproval{CallID: "call-1", Tool: "shell", Rule: "destructive: hard reset", Summary: "git reset --hard",
		RequestedAt: now, ExpiresAt: now.Add(time.Hour)}
	wf, _ := json.Marshal(fleet.WaitingFor{WaitID: "1", Approvals: []fleet.PendingApproval{pa}})
	if _, err := st.TransitionTask(context.Background(), store.TransitionTaskParams{ID: id, From: store.TaskRunning, To: store.TaskWaiting,
		WorkerID: "w1", WaitingFor: wf}); err != nil {
		t.Fatal(err)
	}
	return pa
}

// TestTenantsAndRoles: tenant A's viewer cannot see, list, count or
// stream tenant B's tasks and cannot approve; A's approver approves A's
// calls only and is the approver recorded; submissions go to the
// principal's tenant.
//
//nolint:maintidx // one scenario in order over one fleet per store; split, each part would rebuild it
func TestTenantsAndRoles(t *testing.T) {
	bothStores(t, func(t *testing.T, mk storeMaker) {
		f := setupTenants(t, mk)
		ctx := context.Background()
		taskA := f.submitAs(t, "submitter", validSpec("a's task"))
		taskB := f.submitAs(t, "b-submitter", validSpec("b's task"))
		if taskA.Tenant != "team-a" || taskB.Tenant != "team-b" || taskA.SubmittedBy != "token:"+f.tokens["submitter"].ID {
			t.Fatalf("tenants %q and %q, A submitted by %q", taskA.Tenant, taskB.Tenant, taskA.SubmittedBy)
		}
		viewer := f.clients["viewer"]

		// A's viewer sees A's task, not B's: a 404 as for no task at all.
		if _, err := viewer.Get(ctx, taskA.ID); err != nil {
			t.Fatalf("A's viewer reads A's task: %v", err)
		}
		for what, call := range map[string]func() error{
			"get":      func() error { _, err := viewer.Get(ctx, taskB.ID); return err },
			"tree":     func() error { _, err := viewer.Tree(ctx, taskB.ID); return err },
			"sessions": func() error { _, err := viewer.Sessions(ctx, taskB.ID); return err },
			"perms":    func() error { _, err := viewer.Permissions(ctx, taskB.ID); return err },
			"stream": func() error {
				s, err := viewer.Events(ctx, taskB.ID, client.StreamOptions{})
				closeStream(s)
				return err
			},
		} {
			wantStatus(t, "A's viewer: "+what+" of B's task", call(), http.StatusNotFound)
		}
		page, err := viewer.List(ctx, client.ListFilter{})
		if err != nil || len(page.Tasks) != 1 || page.Tasks[0].ID != taskA.ID {
			t.Fatalf("A's viewer lists %v, %v; want A's task only", page.Tasks, err)
		}
		if page, _ := viewer.List(ctx, client.ListFilter{Tenant: "team-b"}); len(page.Tasks) != 0 {
			t.Fatalf("A's viewer lists %d tasks of team-b", len(page.Tasks))
		}
		counts, err := viewer.Counts(ctx)
		if err != nil || counts[store.TaskQueued] != 1 {
			t.Fatalf("A's viewer counts %v, %v; want A's one task", counts, err)
		}
		all, _ := f.client.Counts(ctx)
		if all[store.TaskQueued] != 2 {
			t.Fatalf("the bootstrap admin counts %v, want both tenants' tasks", all)
		}
		st, err := viewer.Stats(ctx)
		if err != nil || st.Counts[store.TaskQueued] != 1 {
			t.Fatalf("A's viewer's stats count %v, %v", st.Counts, err)
		}
		viewerSeesOnlyItsTenantsEvents(t, f, viewer, taskA.ID, taskB.ID)

		// Submissions: to the default tenant, to a named one only with a role there.
		_, err = f.clients["submitter"].Submit(ctx, fleet.TaskSpec{Prompt: "x", Profile: "openai", Tenant: "team-b"})
		var ae *client.APIError
		if !errors.As(err, &ae) || ae.Status != http.StatusForbidden || !strings.Contains(ae.Message, "team-b") {
			t.Fatalf("A's submitter submits to team-b: %v, want a 403 naming the tenant", err)
		}
		_, err = viewer.Submit(ctx, validSpec("no"))
		wantStatus(t, "a viewer submits", err, http.StatusForbidden)
		if named := f.submitAs(t, "admin", fleet.TaskSpec{Prompt: "x", Profile: "openai", Tenant: "team-a"}); named.Tenant != "team-a" {
			t.Fatalf("a named tenant: %q", named.Tenant)
		}

		// Approvals: the viewer may not answer, A's approver answers A's
		// calls and not B's, and is the approver recorded.
		paA := waitForApproval(t, f.st, taskA.ID)
		paB := waitForApproval(t, f.st, taskB.ID)
		for _, path := range []string{"/v1/sessions/" + taskB.ID.String() + "/turns", "/v1/sessions/" + taskB.ID.String() + "/tool_outputs/c1",
			"/v1/tasks/" + taskB.ID.String() + "/artifacts", "/v1/tasks/" + taskB.ID.String() + "/artifacts/diff",
			"/v1/tasks/" + taskB.ID.String() + "/tree/events"} {
			if code, d, _ := f.rawCall(t, http.MethodGet, path, nil, f.tokens["viewer"].Token); code != http.StatusNotFound {
				t.Fatalf("A's viewer: GET %s: %d %+v, want 404", path, code, d)
			}
		}
		if rep, err := viewer.Usage(ctx, client.UsageQuery{}); err != nil || rep.Total.Sessions != 1 {
			t.Fatalf("A's viewer's usage: %+v, %v; want A's one session", rep.Total, err)
		}
		if rep, _ := f.client.Usage(ctx, client.UsageQuery{}); rep.Total.Sessions != 2 {
			t.Fatalf("the bootstrap admin's usage: %+v, want both sessions", rep.Total)
		}
		if code, _, _ := f.rawCall(t, http.MethodGet, "/v1/sessions/"+taskA.ID.String()+"/turns", nil, f.tokens["viewer"].Token); code != http.StatusOK {
			t.Fatalf("A's viewer reads the turns of A's session: %d", code)
		}
		approve := api.ApprovalRequest{Decision: api.DecisionApprove}
		_, err = viewer.Decide(ctx, taskA.ID, paA.CallID, approve)
		wantStatus(t, "A's viewer approves", err, http.StatusForbidden)
		_, err = f.clients["approver"].Decide(ctx, taskB.ID, paB.CallID, approve)
		wantStatus(t, "A's approver approves B's call", err, http.StatusNotFound)
		_, err = f.clients["approver"].Decide(ctx, taskA.ID, paA.CallID, api.ApprovalRequest{Decision: api.DecisionApprove, By: "someone-else"})
		wantStatus(t, "an approval naming another approver", err, http.StatusBadRequest)
		if _, err := f.clients["approver"].Decide(ctx, taskA.ID, paA.CallID, approve); err != nil {
			t.Fatalf("A's approver approves A's call: %v", err)
		}
		perms, err := viewer.Permissions(ctx, taskA.ID)
		if err != nil || len(perms.Records) != 1 || perms.Records[0].Answer == nil {
			t.Fatalf("permissions of A's task: %+v, %v", perms, err)
		}
		if by := perms.Records[0].Answer.By; by != "token:"+f.tokens["approver"].ID {
			t.Fatalf("the approver recorded is %q, want the principal token:%s", by, f.tokens["approver"].ID)
		}

		// Cancel: a submitter its own tasks only; an approver any of its tenant.
		own := f.submitAs(t, "submitter", validSpec("mine"))
		other := f.submitAs(t, "submitter2", validSpec("theirs"))
		_, err = f.clients["submitter"].Cancel(ctx, other.ID, "")
		wantStatus(t, "a submitter cancels another's task", err, http.StatusForbidden)
		if _, err := f.clients["submitter"].Cancel(ctx, own.ID, ""); err != nil {
			t.Fatalf("a submitter cancels its own task: %v", err)
		}
		if _, err := f.clients["approver"].Cancel(ctx, other.ID, ""); err != nil {
			t.Fatalf("an approver cancels a task of its tenant: %v", err)
		}

		// The audit log: A's admin sees A's entries only, with the approver.
		log, err := f.clients["admin"].Audit(ctx, client.AuditFilter{Action: "approval.approve"})
		if err != nil || len(log.Entries) != 1 {
			t.Fatalf("A's admin's approvals in the audit log: %+v, %v", log, err)
		}
		if e := log.Entries[0]; e.Principal != "token:"+f.tokens["approver"].ID || e.Tenant != "team-a" || e.Status != http.StatusOK ||
			e.Target != taskA.ID.String()+"/"+paA.CallID {
			t.Fatalf("audit entry %+v", e)
		}
		aLog, err := f.clients["admin"].Audit(ctx, client.AuditFilter{Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range aLog.Entries {
			if e.Tenant != "team-a" {
				t.Fatalf("A's admin sees an entry of tenant %q: %+v", e.Tenant, e)
			}
		}
		refused, _ := f.clients["admin"].Audit(ctx, client.AuditFilter{Action: "task.cancel"})
		var sawRefusal bool
		for _, e := range refused.Entries {
			sawRefusal = sawRefusal || (e.Status == http.StatusForbidden && e.Principal == "token:"+f.tokens["submitter"].ID && strings.Contains(e.Error, "submitted"))
		}
		if !sawRefusal {
			t.Fatalf("the refused cancel is not in the audit log: %+v", refused.Entries)
		}
		// Team-b's log holds B's submission and A's refused attempt to submit there.
		bLog, _ := f.client.Audit(ctx, client.AuditFilter{Tenant: "team-b", Action: "task.submit"})
		if len(bLog.Entries) != 2 || bLog.Entries[1].Principal != "token:"+f.tokens["b-submitter"].ID || bLog.Entries[1].Status != http.StatusCreated ||
			bLog.Entries[0].Principal != "token:"+f.tokens["submitter"].ID || bLog.Entries[0].Status != http.StatusForbidden {
			t.Fatalf("team-b's submissions as the bootstrap admin sees them: %+v", bLog.Entries)
		}
		_, err = viewer.Audit(ctx, client.AuditFilter{})
		wantStatus(t, "a viewer reads the audit log", err, http.StatusForbidden)
	})
}

// viewerSeesOnlyItsTenantsEvents: the fleet-wide stream of A's viewer
// carries A's events and none of B's (its filter names A's subjects),
// while the bootstrap admin's carries both.
func viewerSeesOnlyItsTenantsEvents(t *testing.T, f *tenantFleet, viewer *client.Client, taskA, taskB uuid.UUID) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testWait)
	defer cancel()
	p, err := f.q.NewEventPublisher()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = p.Close(ctx) }()
	for i, ev := range []struct {
		tenant string
		task   uuid.UUID
	}{{"team-b", taskB}, {"team-a", taskA}, {"team-b", taskB}, {"team-a", taskA}} {
		e := queue.Event{ID: uuid.NewString(), Kind: "TENANT_PROBE", Tenant: ev.tenant, SessionID: ev.task.String(),
			TaskID: ev.task.String(), RootTaskID: ev.task.String(), Seq: uint64(1000 + i)}
		if err := p.PublishConfirmed(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	probes := func(c *client.Client, want int) []string {
		s, err := c.AllEvents(ctx, client.StreamOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer closeStream(s)
		var tenants []string
		for len(tenants) < want {
			ev, err := s.Next()
			if err != nil {
				t.Fatalf("after %d probes: %v", len(tenants), err)
			}
			if ev.Event.Kind == "TENANT_PROBE" {
				tenants = append(tenants, ev.Event.Tenant)
			}
		}
		return tenants
	}
	// The viewer's stream would show B's first probe before A's second if
	// it carried B's events.
	if got := probes(viewer, 2); strings.Join(got, ",") != "team-a,team-a" {
		t.Fatalf("A's viewer's fleet-wide stream carries the probes of %v, want team-a's only", got)
	}
	if got := probes(f.client, 4); strings.Join(got, ",") != "team-b,team-a,team-b,team-a" {
		t.Fatalf("the bootstrap admin's stream carries the probes of %v, want all four", got)
	}
}

func closeStream(s *client.EventStream) {
	if s != nil {
		_ = s.Close()
	}
}

// TestTicketKeepsItsPrincipal: a stream ticket opens only what its
// principal may read.
func TestTicketKeepsItsPrincipal(t *testing.T) {
	f := setupTenants(t, sqliteStore)
	taskB := f.submitAs(t, "b-submitter", validSpec("b"))
	var tk api.StreamTicket
	code, _, raw := f.rawCall(t, http.MethodPost, "/v1/stream-tickets", "{}", f.tokens["viewer"].Token)
	if code != http.StatusCreated || json.Unmarshal(raw, &tk) != nil {
		t.Fatalf("ticket: %d %s", code, raw)
	}
	code, d, _ := f.rawCall(t, http.MethodGet, "/v1/tasks/"+taskB.ID.String()+"/events?ticket="+tk.Ticket, nil, "")
	if code != http.StatusNotFound {
		t.Fatalf("A's viewer's ticket on B's stream: %d %+v, want 404", code, d)
	}
}

// TestRevokedAndExpiredTokens: a revoked token is refused from the next
// request on, by every dispatcher on the store; an expired one too.
func TestRevokedAndExpiredTokens(t *testing.T) {
	bothStores(t, func(t *testing.T, mk storeMaker) {
		f := setupTenants(t, mk)
		ctx := context.Background()
		tok := f.tokens["viewer"]
		other, err := client.New(f.serve(t, APIOptions{Token: testToken}), tok.Token, nil)
		if err != nil {
			t.Fatal(err)
		}
		who, err := other.Whoami(ctx)
		if err != nil || who.ID != "token:"+tok.ID || who.Grants["team-a"] != "viewer" || who.DefaultTenant != "team-a" {
			t.Fatalf("whoami on the second dispatcher: %+v, %v", who, err)
		}
		revoked, err := f.clients["admin"].RevokeToken(ctx, tok.ID)
		if err != nil || revoked.RevokedAt.IsZero() {
			t.Fatalf("A's admin revokes A's viewer: %+v, %v", revoked, err)
		}
		for name, c := range map[string]*client.Client{"first": f.clients["viewer"], "second": other} {
			_, err := c.Counts(ctx)
			var ae *client.APIError
			if !errors.As(err, &ae) || ae.Status != http.StatusUnauthorized || !strings.Contains(ae.Message, "revoked") {
				t.Fatalf("the revoked token on the %s dispatcher: %v, want a 401 saying revoked", name, err)
			}
		}
		if list, _ := f.clients["admin"].ListTokens(ctx, false); len(list) != 4 {
			t.Fatalf("A's admin lists %d live tokens, want A's four", len(list))
		}
		_, err = f.clients["admin"].RevokeToken(ctx, f.tokens["b-submitter"].ID)
		wantStatus(t, "A's admin revokes B's token", err, http.StatusNotFound)

		secret, hash := NewToken()
		if _, err := f.st.CreateToken(ctx, store.CreateTokenParams{Name: "old", Hash: hash, Grants: map[string]string{"team-a": "admin"},
			DefaultTenant: "team-a", CreatedBy: "bootstrap", ExpiresAt: time.Now().Add(-time.Second)}); err != nil {
			t.Fatal(err)
		}
		code, d, _ := f.rawCall(t, http.MethodGet, "/v1/counts", nil, secret)
		if code != http.StatusUnauthorized || !strings.Contains(d.Message, "expired") {
			t.Fatalf("an expired token: %d %+v, want a 401 saying expired", code, d)
		}
		code, _, _ = f.rawCall(t, http.MethodGet, "/v1/counts", nil, TokenPrefix+"unknown")
		if code != http.StatusUnauthorized {
			t.Fatalf("an unknown API token: %d, want 401", code)
		}
	})
}

// TestTokenGrantsStayWithinTheCreator: an admin of one tenant cannot
// grant beyond it; bad requests name their field.
func TestTokenGrantsStayWithinTheCreator(t *testing.T) {
	f := setupTenants(t, sqliteStore)
	ctx := context.Background()
	admin := f.clients["admin"]
	for _, c := range []struct {
		req   api.TokenRequest
		code  int
		field string
	}{
		{api.TokenRequest{Name: "x", Grants: map[string]string{"team-b": "viewer"}}, http.StatusForbidden, "grants.team-b"},
		{api.TokenRequest{Name: "x", Grants: map[string]string{"*": "viewer"}}, http.StatusForbidden, "grants.*"},
		{api.TokenRequest{Name: "", Grants: map[string]string{"team-a": "viewer"}}, http.StatusBadRequest, "name"},
		{api.TokenRequest{Name: "x", Grants: map[string]string{"team-a": "owner"}}, http.StatusBadRequest, "grants.team-a"},
		{api.TokenRequest{Name: "x", Grants: map[string]string{"team a": "viewer"}}, http.StatusBadRequest, "grants"},
		{api.TokenRequest{Name: "x", Grants: map[string]string{"team-a": "viewer"}, ExpiresIn: "-1h"}, http.StatusBadRequest, "expires_in"},
	} {
		_, err := admin.CreateToken(ctx, c.req)
		var ae *client.APIError
		if !errors.As(err, &ae) || ae.Status != c.code || ae.Field != c.field {
			t.Errorf("create %+v: %v, want %d on field %s", c.req, err, c.code, c.field)
		}
	}
	tok, err := admin.CreateToken(ctx, api.TokenRequest{Name: "ci", Grants: map[string]string{"team-a": "submitter"}, ExpiresIn: "1h"})
	if err != nil || tok.DefaultTenant != "team-a" || time.Until(tok.ExpiresAt) > time.Hour || tok.CreatedBy != "token:"+f.tokens["admin"].ID {
		t.Fatalf("A's admin creates a submitter of A: %+v, %v", tok, err)
	}
}

// TestRouteRoles calls every route as each role of tenant A on a task of
// A: a role below the route's is a 403, any other a different answer; a
// route that needs every tenant refuses even A's admin.
func TestRouteRoles(t *testing.T) {
	f := setupTenants(t, sqliteStore)
	task := f.submitAs(t, "submitter", validSpec("target"))
	runTask(t, f.st, task.ID)
	bodies := map[string]string{
		"POST /v1/tasks":                          `{"prompt":"p","profile":"openai"}`,
		"POST /v1/tasks/batch":                    `{"tasks":[{"prompt":"p","profile":"openai"}]}`,
		"POST /v1/tasks/{id}/steer":               `{"message":"m"}`,
		"POST /v1/tasks/{id}/follow_up":           `{"message":"m"}`,
		"POST /v1/tasks/{id}/configure":           `{"model":"m"}`,
		"POST /v1/tasks/{id}/approvals/{call_id}": `{"decision":"approve"}`,
		"PUT /v1/budgets/{label}":                 `{"max_cost_usd":1}`,
		"POST /v1/tokens":                         `{"name":"n","grants":{"team-a":"viewer"}}`,
	}
	path := func(pattern string) (method, p string) {
		method, p, _ = strings.Cut(pattern, " ")
		p = strings.NewReplacer("{id}", task.ID.String(), "{call_id}", "c1", "{kind}", "diff",
			"{label}", "team=a").Replace(p)
		if strings.Contains(pattern, "/v1/budgets") {
			p += "?tenant=team-a" // a budget of team-a; without a tenant it is fleet-wide (TestTenantBudgetsAPI)
		}
		return method, p
	}
	mixed, err := f.client.CreateToken(context.Background(), api.TokenRequest{Name: "mixed",
		Grants: map[string]string{"team-a": "viewer", "team-b": "admin"}, DefaultTenant: "team-a"})
	if err != nil {
		t.Fatal(err)
	}
	for _, role := range identity.Roles {
		tok := f.tokens[string(role)].Token
		for pattern, acc := range routeAccess {
			if pattern == "/v1/" {
				continue
			}
			method, p := path(pattern)
			if pattern == "DELETE /v1/tokens/{id}" || strings.HasPrefix(pattern, "GET /v1/sessions/") {
				p = strings.Replace(p, task.ID.String(), uuid.NewString(), 1)
				if strings.HasPrefix(pattern, "GET /v1/sessions/") {
					p = strings.Replace(p, p[len("/v1/sessions/"):len("/v1/sessions/")+36], task.ID.String(), 1) // the task's session
				}
			}
			code := f.status(t, method, p, bodies[pattern], tok)
			forbidden := !role.Includes(acc.role) || acc.scope == scopeAll
			if forbidden != (code == http.StatusForbidden) || code == http.StatusUnauthorized {
				t.Errorf("%s as %s of team-a: %d; the route needs %s (scope %d)", pattern, role, code, acc.role, acc.scope)
			}
			if role != identity.Viewer {
				continue
			}
			// A viewer of team-a who is admin of team-b: on A's task it
			// is a viewer; it submits to team-a (its default) as one.
			code = f.status(t, method, p, bodies[pattern], mixed.Token)
			forbidden = acc.scope == scopeAll || (acc.scope == scopeTask && acc.role != identity.Viewer) ||
				pattern == "POST /v1/tasks" || pattern == "POST /v1/tasks/batch" || pattern == "POST /v1/tokens" ||
				pattern == "PUT /v1/budgets/{label}" || pattern == "DELETE /v1/budgets/{label}"
			if forbidden != (code == http.StatusForbidden) {
				t.Errorf("%s as viewer of team-a and admin of team-b: %d, want a 403: %v", pattern, code, forbidden)
			}
		}
	}
}

// TestRouteRoleTable states the role of every route, as docs/api.md
// does, apart from the table the dispatcher enforces.
func TestRouteRoleTable(t *testing.T) {
	want := map[string]string{
		"POST /v1/stream-tickets": "viewer", "GET /v1/whoami": "", "/v1/": "",
		"POST /v1/tasks": "submitter", "POST /v1/tasks/batch": "submitter", "GET /v1/tasks": "viewer",
		"GET /v1/tasks/{id}": "viewer", "GET /v1/tasks/{id}/tree": "viewer",
		"POST /v1/tasks/{id}/cancel": "submitter", "POST /v1/tasks/{id}/steer": "submitter",
		"POST /v1/tasks/{id}/follow_up": "submitter", "POST /v1/tasks/{id}/configure": "submitter",
		"POST /v1/tasks/{id}/compact": "submitter", "POST /v1/tasks/{id}/approvals/{call_id}": "approver",
		"GET /v1/tasks/{id}/permissions": "viewer", "GET /v1/tasks/{id}/sessions": "viewer",
		"GET /v1/tasks/{id}/artifacts": "viewer", "GET /v1/tasks/{id}/rounds": "viewer", "GET /v1/tasks/{id}/artifacts/{kind}": "viewer",
		"GET /v1/tasks/{id}/events": "viewer", "GET /v1/tasks/{id}/tree/events": "viewer",
		"GET /v1/tasks/{id}/trace": "viewer", "GET /v1/events": "viewer", "GET /v1/sessions/{id}/turns": "viewer",
		"GET /v1/sessions/{id}/tool_outputs/{call_id}": "viewer", "GET /v1/counts": "viewer", "GET /v1/stats": "viewer",
		"GET /v1/usage": "viewer", "GET /v1/budgets": "viewer", "GET /v1/budgets/{label}": "viewer",
		"PUT /v1/budgets/{label}": "admin", "DELETE /v1/budgets/{label}": "admin",
		"GET /v1/webhooks/deliveries": "admin in *", "POST /v1/tokens": "admin", "GET /v1/tokens": "admin",
		"DELETE /v1/tokens/{id}": "admin", "GET /v1/audit": "admin",
		"POST /v1/tasks/bulk": "submitter", "GET /v1/bulk/{id}": "viewer", "GET /v1/retention": "viewer",
		"POST /v1/queues/{queue}/pause": "admin in *", "POST /v1/queues/{queue}/resume": "admin in *", "GET /v1/pauses": "viewer",
		"GET /v1/reports": "viewer", "GET /v1/reports/export": "viewer",
		"POST /v1/schedules": "submitter", "GET /v1/schedules": "viewer", "GET /v1/schedules/{id}": "viewer",
		"DELETE /v1/schedules/{id}": "submitter", "POST /v1/schedules/{id}/pause": "submitter",
		"POST /v1/schedules/{id}/resume": "submitter",
	}
	if len(want) != len(routeAccess) {
		t.Errorf("the table states %d routes, routeAccess %d", len(want), len(routeAccess))
	}
	for pattern, acc := range routeAccess {
		got := string(acc.role)
		if acc.scope == scopeAll {
			got += " in *"
		}
		if w, ok := want[pattern]; !ok || w != got {
			t.Errorf("%s needs %q, the table says %q", pattern, got, w)
		}
	}
}

// status sends one request and returns its status code; an event stream
// is left as soon as its headers arrive.
func (f *tenantFleet) status(t *testing.T, method, path, body, token string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testWait)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, f.srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if method != http.MethodGet {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	cancel()
	_ = resp.Body.Close()
	return resp.StatusCode
}

// TestNoAuthIsAnonymousAdmin: without a token the API acts as
// "anonymous", admin of every tenant, and still honours API tokens.
func TestNoAuthIsAnonymousAdmin(t *testing.T) {
	f := setupTenants(t, sqliteStore)
	url := f.serve(t, APIOptions{})
	open, _ := client.New(url, "", nil)
	ctx := context.Background()
	who, err := open.Whoami(ctx)
	if err != nil || who.ID != "anonymous" || who.Grants[identity.AllTenants] != "admin" {
		t.Fatalf("whoami without a token: %+v, %v", who, err)
	}
	viewer, _ := client.New(url, f.tokens["viewer"].Token, nil)
	if who, err := viewer.Whoami(ctx); err != nil || who.ID != "token:"+f.tokens["viewer"].ID {
		t.Fatalf("an API token on an API without authentication: %+v, %v", who, err)
	}
}

// serve serves the fleet's dispatcher on another server with opts (a
// second dispatcher on the same store, as far as the API goes).
func (f *tenantFleet) serve(t *testing.T, opts APIOptions) string {
	t.Helper()
	srv := httptest.NewServer(f.d.Handler(opts))
	t.Cleanup(func() { srv.CloseClientConnections(); srv.Close() })
	return srv.URL
}

// TestAuditRetention: a running dispatcher deletes the audit entries
// older than its retention and keeps the newer ones.
func TestAuditRetention(t *testing.T) {
	ctx := context.Background()
	withEntries := func(t testing.TB) store.Store {
		st := sqliteStore(t)
		for _, at := range []time.Time{time.Now().Add(-48 * time.Hour), time.Now()} {
			if _, err := st.AppendAudit(ctx, store.AuditEntry{At: at, Principal: "bootstrap", Tenant: "default", Action: "task.submit", Status: 201}); err != nil {
				t.Fatal(err)
			}
		}
		return st
	}
	b := setupAPIWith(t, withEntries, func(c *Config) { c.AuditRetention = 24 * time.Hour })
	testenv.Eventually(t, testWait, "the old audit entry to be deleted", func() bool {
		page, err := b.st.ListAudit(ctx, store.ListAuditParams{})
		return err == nil && len(page.Entries) == 1 && time.Since(page.Entries[0].At) < time.Hour
	})
}
