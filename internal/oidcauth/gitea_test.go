package oidcauth_test

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/uuid"
	"golang.org/x/oauth2"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/client"
	"github.com/agentfleet/agentfleet/fleet/dashboard"
	"github.com/agentfleet/agentfleet/fleet/dispatcher"
	"github.com/agentfleet/agentfleet/fleet/fleettest"
	"github.com/agentfleet/agentfleet/internal/browsertest"
	"github.com/agentfleet/agentfleet/internal/giteatest"
	"github.com/agentfleet/agentfleet/internal/oidcauth"
	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/queue/natstest"
	"github.com/agentfleet/agentfleet/store"
)

// wait bounds the whole test's waits; each is on a condition.
const wait = 3 * time.Minute

const sharedToken = "shared-token-for-the-sso-test"

// people are the Gitea users the test logs in as: ada is in the org
// acme's team approvers, bob in its team readers.
var people = map[string]struct{ full, team string }{
	"ada": {"Ada Lovelace", "approvers"},
	"bob": {"Bob Reader", "readers"},
}

const password = "agentfleet-user-pass-1"

// ssoFleet is a dispatcher with single sign-on against a real Gitea,
// serving the dashboard and the API on a loopback port.
type ssoFleet struct {
	gitea        *giteatest.Server
	base         string // http://127.0.0.1:port of the dispatcher
	cfg          oidcauth.Config
	clientID     string
	clientSecret string
	catcher      string         // a second redirect URI: the test's own client
	codes        chan string    // codes the catcher received
	auth         *oidcauth.Auth // the dispatcher's
	store        store.Store
}

// TestGiteaSingleSignOn: on a real Gitea, users in an org's teams log in
// to the real dashboard in headless Chromium (authorization code +
// PKCE) and see their name, tenant and role, with the controls their
// role may not use hidden; an ID token and an access token Gitea issued
// are accepted by the API with the mapped tenants and roles; a tampered
// one, an expired one and ones from another issuer are refused; a forged
// session cookie is refused and logging out ends the session.
func TestGiteaSingleSignOn(t *testing.T) {
	bin := browsertest.Chromium(t, "the single sign-on browser test")
	f := startSSO(t)
	taskID := f.submit(t, "acme")
	parked := f.parkForApproval(t, f.submit(t, "acme"))

	// Ada logs in through Gitea's own pages and lands on the dashboard.
	ada := f.browser(t, bin)
	ada.LoginWithGitea(t, "ada", password)
	if got := ada.Text(t, "#whoami-name"); got != "Ada Lovelace" {
		t.Fatalf("the dashboard names %q, want Ada Lovelace", got)
	}
	if tenant, role := ada.Text(t, "#whoami-tenant"), ada.Text(t, "#whoami-role"); tenant != "acme" || role != "approver" {
		t.Fatalf("the dashboard shows tenant %q role %q, want acme approver", tenant, role)
	}
	// Budgets are read-only on the page; a viewer of a tenant reads its
	// tenant's (setting one is the CLI's, as an admin).
	ada.Run(t, "ada sees acme's task and may cancel it and read budgets",
		chromedp.Navigate(f.base+"/#task="+taskID),
		chromedp.WaitVisible(chromedp.CSS(`#detail[data-state="queued"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#cancel-button`)),
		chromedp.WaitVisible(chromedp.CSS(`#submit-box`)),
		chromedp.WaitVisible(chromedp.CSS(`#budget-section`)))
	ada.Run(t, "ada, an approver, may answer the pending call",
		chromedp.Navigate(f.base+"/#task="+parked),
		chromedp.WaitVisible(chromedp.CSS(`#detail[data-state="waiting"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#detail-approvals .approval button.approve`)))

	// Bob, a reader, sees the task but none of the controls.
	bob := f.browser(t, bin)
	bob.LoginWithGitea(t, "bob", password)
	if got, role := bob.Text(t, "#whoami-name"), bob.Text(t, "#whoami-role"); got != "Bob Reader" || role != "viewer" {
		t.Fatalf("bob's dashboard shows %q as %q", got, role)
	}
	bob.Run(t, "bob sees the task without controls",
		chromedp.Navigate(f.base+"/#task="+taskID),
		chromedp.WaitVisible(chromedp.CSS(`#detail[data-state="queued"]`)),
		chromedp.WaitNotVisible(chromedp.CSS(`#cancel-button`)),
		chromedp.WaitNotVisible(chromedp.CSS(`#steer-button`)),
		chromedp.WaitNotVisible(chromedp.CSS(`#submit-box`)),
		chromedp.WaitNotVisible(chromedp.CSS(`#bulk-box`)))
	bob.Run(t, "bob sees the pending call but no buttons to answer it",
		chromedp.Navigate(f.base+"/#task="+parked),
		chromedp.WaitVisible(chromedp.CSS(`#detail[data-state="waiting"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#detail-approvals .approval .not-yours`)))
	if n, err := chromedp.Run(bob.Ctx, chromedp.Evaluate[int](`document.querySelectorAll('#detail-approvals button').length`)); err != nil || n != 0 {
		t.Fatalf("bob's page shows %d approval buttons (%v), want none", n, err)
	}
	bob.Run(t, "bob logs out",
		chromedp.Click(chromedp.CSS(`#logout-button`)),
		chromedp.WaitVisible(chromedp.CSS(`#token-banner`)),
		chromedp.WaitVisible(chromedp.CSS(`#sso-login`)),
		chromedp.WaitNotVisible(chromedp.CSS(`#whoami`)))

	// Ada's browser, still signed in at Gitea, gets tokens for the test's
	// own client of the same application: a real ID token and access token.
	tok := tokens(t, ada, f)
	idToken, _ := tok.Extra("id_token").(string)
	if idToken == "" || tok.AccessToken == "" {
		t.Fatalf("gitea returned no ID token or access token: %+v", tok)
	}
	claims := payload(t, idToken)
	if groups := fmt.Sprint(claims["groups"]); !strings.Contains(groups, "acme:approvers") {
		t.Fatalf("gitea's ID token carries groups %s, want acme:approvers among them", groups)
	}

	// The API takes the ID token and the access token as ada.
	for name, bearer := range map[string]string{"ID token": idToken, "access token": tok.AccessToken} {
		code, who := f.whoami(t, bearer)
		if code != http.StatusOK || !strings.HasPrefix(who.ID, "oidc:") || who.Name != "Ada Lovelace" || who.DefaultTenant != "acme" ||
			fmt.Sprint(who.Grants) != "map[acme:approver lab:admin]" {
			t.Fatalf("whoami with ada's %s: %d %+v", name, code, who)
		}
	}

	// Refused: tampered, from another issuer, signed by another key.
	claims["groups"] = []string{"acme", "acme:owners"}
	refused := map[string]string{
		"tampered ID token":     resign(idToken, claims),
		"tampered access token": tamper(tok.AccessToken),
		"another issuer":        forge(t, map[string]any{"iss": "https://idp.other.example/", "aud": f.clientID, "sub": "1", "exp": time.Now().Add(time.Hour).Unix()}),
		"another key":           forge(t, map[string]any{"iss": f.cfg.Issuer, "aud": f.clientID, "sub": "1", "exp": time.Now().Add(time.Hour).Unix()}),
	}
	for name, bearer := range refused {
		if code, who := f.whoami(t, bearer); code != http.StatusUnauthorized {
			t.Errorf("%s: %d %+v, want 401", name, code, who)
		}
	}

	// Expired: the same ID token, judged two hours later.
	later := f.cfg
	later.Now = func() time.Time { return time.Now().Add(2 * time.Hour) }
	later.AcceptAccessTokens = false
	a, err := oidcauth.New(context.Background(), later)
	if err != nil {
		t.Fatal(err)
	}
	bearerAuth := a.Authenticators()[0]
	req := httptest.NewRequest(http.MethodGet, "/v1/whoami", nil)
	req.Header.Set("Authorization", "Bearer "+idToken)
	if _, ok, err := bearerAuth.Authenticate(req); !ok || err == nil || !strings.Contains(err.Error(), "expired") {
		t.Errorf("an expired ID token: ok %v, err %v; want refused as expired", ok, err)
	}
	// Without accept_access_tokens an access token is not this kind.
	req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
	if _, ok, err := bearerAuth.Authenticate(req); ok || err != nil {
		t.Errorf("an access token without accept_access_tokens: ok %v, err %v; want not recognised", ok, err)
	}

	// A session cookie the dispatcher did not seal is refused.
	r, _ := http.NewRequest(http.MethodGet, f.base+"/v1/whoami", nil)
	r.AddCookie(&http.Cookie{Name: oidcauth.SessionCookie, Value: base64.RawURLEncoding.EncodeToString(make([]byte, 64))})
	if resp, err := http.DefaultClient.Do(r); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("a forged session cookie: %v %v, want 401", resp, err)
	} else {
		_ = resp.Body.Close()
	}
	// Beside a token the caller chose, a stale cookie is not looked at.
	r.Header.Set("Authorization", "Bearer "+sharedToken)
	if resp, err := http.DefaultClient.Do(r); err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("the shared token beside a stale session cookie: %v %v, want 200", resp, err)
	} else {
		_ = resp.Body.Close()
	}
}

// startSSO starts Gitea with two users in an org's teams and an OAuth2
// application, and the dispatcher with single sign-on against it.
func startSSO(t *testing.T) *ssoFleet {
	g := giteatest.Start(t)
	g.API(t, "POST", "/orgs", `{"username":"acme"}`, nil)
	for login, p := range people {
		g.API(t, "POST", "/admin/users", fmt.Sprintf(`{"username":%q,"full_name":%q,"email":"%s@example.invalid","password":%q,"must_change_password":false}`,
			login, p.full, login, password), nil)
		var team struct{ ID int64 }
		g.API(t, "POST", "/orgs/acme/teams", fmt.Sprintf(`{"name":%q,"permission":"read","units":["repo.code"]}`, p.team), &team)
		g.API(t, "PUT", fmt.Sprintf("/teams/%d/members/%s", team.ID, login), "", nil)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &ssoFleet{gitea: g, base: "http://" + ln.Addr().String(), codes: make(chan string, 4)}
	catcher := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.codes <- r.URL.Query().Get("code")
		_, _ = w.Write([]byte("code received"))
	}))
	t.Cleanup(catcher.Close)
	f.catcher = catcher.URL + "/cb"
	var app struct {
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
	}
	g.API(t, "POST", "/user/applications/oauth2", fmt.Sprintf(`{"name":"agentfleet","confidential_client":true,"redirect_uris":[%q,%q]}`,
		f.base+oidcauth.CallbackPath, f.catcher), &app)
	f.clientID, f.clientSecret = app.ClientID, app.ClientSecret
	secretFile := filepath.Join(t.TempDir(), "client-secret")
	if err := os.WriteFile(secretFile, []byte(app.ClientSecret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f.cfg = oidcauth.Config{Issuer: g.URL + "/", ClientID: app.ClientID, ClientSecretFile: secretFile,
		RedirectURL: f.base + oidcauth.CallbackPath, DefaultTenant: "acme", AcceptAccessTokens: true,
		Mappings: []oidcauth.Mapping{
			{Value: "acme", Tenant: "acme", Role: "viewer"},
			{Value: "acme:approvers", Tenant: "acme", Role: "approver"},
			{Claim: "preferred_username", Value: "ada", Tenant: "lab", Role: "admin"},
		},
		AllowPrivate: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}
	if f.auth, err = oidcauth.New(context.Background(), f.cfg); err != nil {
		t.Fatal(err)
	}

	d, st := startDispatcher(t)
	f.store = st
	api := d.Handler(dispatcher.APIOptions{Token: sharedToken, ListenAddr: ln.Addr().String(), Authenticators: f.auth.Authenticators()})
	root := http.NewServeMux()
	root.Handle(oidcauth.StatusPath, f.auth.Handler())
	root.Handle("/", dashboard.With(api))
	srv := &http.Server{Handler: root, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return f
}

// startDispatcher runs a dispatcher on an in-process NATS and SQLite,
// without workers.
func startDispatcher(t *testing.T) (*dispatcher.Dispatcher, store.Store) {
	nc := natstest.Start(t).Connect(t)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	q, err := queue.Open(ctx, nc, queue.Config{})
	if err != nil {
		t.Fatal(err)
	}
	st := fleettest.SQLiteStore(t)
	d, err := dispatcher.New(st, q, dispatcher.Config{})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- d.Run(runCtx) }()
	t.Cleanup(func() {
		stop()
		if err := <-ran; err != nil {
			t.Errorf("Dispatcher.Run: %v", err)
		}
	})
	return d, st
}

// parkForApproval does to the task what a worker does when a call needs
// a person's approval: claims it and parks it waiting for the answer.
func (f *ssoFleet) parkForApproval(t *testing.T, id string) string {
	ctx := context.Background()
	tid := uuid.MustParse(id)
	if _, err := f.store.ClaimTask(ctx, store.ClaimTaskParams{ID: tid, WorkerID: "sso-test"}); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	w, _ := json.Marshal(fleet.WaitingFor{WaitID: "1", Approvals: []fleet.PendingApproval{{CallID: "call-1", Tool: "shell",
		Arguments: json.RawMessage(`{"command":"git push --force"}`), Rule: "ask", RequestedAt: now, ExpiresAt: now.Add(time.Hour)}}})
	if _, err := f.store.TransitionTask(ctx, store.TransitionTaskParams{ID: tid, From: store.TaskRunning, To: store.TaskWaiting,
		WorkerID: "sso-test", WaitingFor: w}); err != nil {
		t.Fatal(err)
	}
	return id
}

// submit submits a task in tenant with the shared token; no worker runs
// it, so it stays queued.
func (f *ssoFleet) submit(t *testing.T, tenant string) string {
	c, err := client.New(f.base, sharedToken, nil)
	if err != nil {
		t.Fatal(err)
	}
	sub, err := c.Submit(context.Background(), fleet.TaskSpec{Prompt: "a task of " + tenant, Profile: "openai", Tenant: tenant})
	if err != nil {
		t.Fatal(err)
	}
	return sub.Task.ID.String()
}

type whoami struct {
	ID            string            `json:"id"`
	Name          string            `json:"name"`
	DefaultTenant string            `json:"default_tenant"`
	Grants        map[string]string `json:"grants"`
}

// whoami asks GET /v1/whoami with bearer.
func (f *ssoFleet) whoami(t *testing.T, bearer string) (int, whoami) {
	req, _ := http.NewRequest(http.MethodGet, f.base+"/v1/whoami", nil)
	req.Header.Set("Authorization", "Bearer "+bearer)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	var w whoami
	_ = json.NewDecoder(resp.Body).Decode(&w)
	return resp.StatusCode, w
}

// browser starts a headless Chromium on the fleet's dashboard.
func (f *ssoFleet) browser(t *testing.T, bin string) *browsertest.Browser {
	return browsertest.New(t, bin, f.base, wait)
}

// tokens runs the code flow with PKCE for the test's own redirect URI
// in the browser (signed in at Gitea, the application authorized, so
// Gitea redirects at once) and redeems the code.
func tokens(t *testing.T, b *browsertest.Browser, f *ssoFleet) *oauth2.Token {
	t.Helper()
	conf := oauth2.Config{ClientID: f.clientID, ClientSecret: f.clientSecret, RedirectURL: f.catcher,
		Scopes:   []string{"openid", "profile", "email", "groups"},
		Endpoint: oauth2.Endpoint{AuthURL: f.gitea.URL + "/login/oauth/authorize", TokenURL: f.gitea.URL + "/login/oauth/access_token"}}
	verifier := oauth2.GenerateVerifier()
	b.Run(t, "authorize the test's client", chromedp.Navigate(conf.AuthCodeURL("state-1", oauth2.S256ChallengeOption(verifier))))
	var code string
	select {
	case code = <-f.codes:
	case <-b.Ctx.Done():
		t.Fatal("gitea never redirected to the test's client")
	}
	tok, err := conf.Exchange(context.Background(), code, oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// payload decodes a JWT's claims (unverified).
func payload(t *testing.T, jwt string) map[string]any {
	parts := strings.Split(jwt, ".")
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// resign puts claims in jwt's payload and keeps its (now wrong) signature.
func resign(jwt string, claims map[string]any) string {
	parts := strings.Split(jwt, ".")
	b, _ := json.Marshal(claims)
	return parts[0] + "." + base64.RawURLEncoding.EncodeToString(b) + "." + parts[2]
}

// tamper flips a bit of jwt's signature.
func tamper(jwt string) string {
	parts := strings.Split(jwt, ".")
	sig, _ := base64.RawURLEncoding.DecodeString(parts[2])
	sig[0] ^= 1
	return parts[0] + "." + parts[1] + "." + base64.RawURLEncoding.EncodeToString(sig)
}

// forge signs claims with a fresh RSA key: a token of an issuer this
// dispatcher does not trust, or one posing as Gitea without its key.
func forge(t *testing.T, claims map[string]any) string {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	head, _ := json.Marshal(map[string]string{"alg": "RS256", "typ": "JWT", "kid": "other"})
	body, _ := json.Marshal(claims)
	signing := base64.RawURLEncoding.EncodeToString(head) + "." + base64.RawURLEncoding.EncodeToString(body)
	sum := sha256.Sum256([]byte(signing))
	sig, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, sum[:])
	if err != nil {
		t.Fatal(err)
	}
	return signing + "." + base64.RawURLEncoding.EncodeToString(sig)
}
