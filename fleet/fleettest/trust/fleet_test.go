package trust_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/api"
	"github.com/agentfleet/agentfleet/fleet/client"
	"github.com/agentfleet/agentfleet/fleet/dashboard"
	"github.com/agentfleet/agentfleet/fleet/dev"
	"github.com/agentfleet/agentfleet/fleet/dispatcher"
	"github.com/agentfleet/agentfleet/fleet/fleettest"
	"github.com/agentfleet/agentfleet/internal/giteatest"
	"github.com/agentfleet/agentfleet/internal/oidcauth"
	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/store"
)

// The tenants.
const (
	tenantA = "team-a"
	tenantB = "team-b"
)

// bootstrapToken is the dispatcher's configured token (admin of every
// tenant), used only to create the principals' tokens.
const bootstrapToken = "trust-suite-bootstrap-token"

// password is every Gitea user's.
const password = "agentfleet-user-pass-1"

// people are the Gitea users, each in one team of tenant A's org; the
// dispatcher maps the teams to roles (see startSSO).
var people = map[string]struct{ full, team string }{
	"vera": {"Vera Viewer", "viewers"},
	"ada":  {"Ada Approver", "approvers"},
}

// tokenGrants are the API tokens the suite creates: name to tenant to role.
var tokenGrants = map[string]map[string]string{
	"a-viewer":    {tenantA: "viewer"},
	"a-submitter": {tenantA: "submitter"},
	"a-approver":  {tenantA: "approver"},
	"admin":       {"*": "admin"},
	"b-approver":  {tenantB: "approver"}, // also B's submitter
}

// suite is the one running fleet and its principals.
type suite struct {
	fleet   *fleettest.Fleet
	base    string // the API and dashboard with single sign-on: http://127.0.0.1:port
	devBase string // dev mode's face (no token) on the same dispatcher
	devLog  *requestLog
	gitea   *giteatest.Server
	tokens  map[string]api.CreatedToken
	clients map[string]*client.Client

	// observer is tenant A's observer's NATS connection, subscribed to
	// A's event subjects before any task was submitted.
	observer           *nats.Conn
	observed           *nats.Subscription
	observerViolations chan error
}

// start brings the fleet up: NATS with the shipped users, Postgres, one
// worker, the dispatcher with single sign-on against Gitea, and dev
// mode's face.
func start(t *testing.T) *suite {
	t.Helper()
	g := giteatest.Start(t)
	s := &suite{gitea: g, tokens: map[string]api.CreatedToken{}, clients: map[string]*client.Client{}}
	s.fleet = fleettest.Start(t, fleettest.Options{Restricted: true, Observers: []string{tenantA}, Workers: 1})
	s.observe(t)

	d, err := dispatcher.New(s.fleet.Store, s.fleet.Queue, dispatcher.Config{Logger: slog.New(slog.DiscardHandler)})
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

	ln := listen(t)
	s.base = "http://" + ln.Addr().String()
	auth := s.startSSO(t, g)
	root := http.NewServeMux()
	root.Handle(oidcauth.StatusPath, auth.Handler())
	root.Handle("/", dashboard.With(d.Handler(dispatcher.APIOptions{Token: bootstrapToken, ListenAddr: ln.Addr().String(),
		Authenticators: auth.Authenticators()})))
	serve(t, ln, root)

	devLn := listen(t)
	s.devBase = "http://" + devLn.Addr().String()
	s.devLog = &requestLog{next: dev.Handler(d, dispatcher.APIOptions{ListenAddr: devLn.Addr().String()})}
	serve(t, devLn, s.devLog)

	admin := s.client(t, bootstrapToken)
	for name, grants := range tokenGrants {
		tok, err := admin.CreateToken(context.Background(), api.TokenRequest{Name: name, Grants: grants})
		if err != nil {
			t.Fatalf("creating the token of %s: %v", name, err)
		}
		s.tokens[name], s.clients[name] = tok, s.client(t, tok.Token)
	}
	return s
}

// startSSO makes tenant A's org in Gitea with a team per person and an
// OAuth2 application redirecting to the dispatcher, and returns single
// sign-on configured against it as docs/operations.md describes: the
// org's viewers team is A's viewer, its approvers team A's approver.
func (s *suite) startSSO(t *testing.T, g *giteatest.Server) *oidcauth.Auth {
	t.Helper()
	g.API(t, "POST", "/orgs", fmt.Sprintf(`{"username":%q}`, tenantA), nil)
	for login, p := range people {
		g.API(t, "POST", "/admin/users", fmt.Sprintf(`{"username":%q,"full_name":%q,"email":"%s@example.invalid","password":%q,"must_change_password":false}`,
			login, p.full, login, password), nil)
		var team struct{ ID int64 }
		g.API(t, "POST", "/orgs/"+tenantA+"/teams", fmt.Sprintf(`{"name":%q,"permission":"read","units":["repo.code"]}`, p.team), &team)
		g.API(t, "PUT", fmt.Sprintf("/teams/%d/members/%s", team.ID, login), "", nil)
	}
	var app struct {
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
	}
	g.API(t, "POST", "/user/applications/oauth2", fmt.Sprintf(`{"name":"agentfleet","confidential_client":true,"redirect_uris":[%q]}`,
		s.base+oidcauth.CallbackPath), &app)
	secretFile := filepath.Join(t.TempDir(), "client-secret")
	if err := os.WriteFile(secretFile, []byte(app.ClientSecret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := oidcauth.Config{Issuer: g.URL + "/", ClientID: app.ClientID, ClientSecretFile: secretFile,
		RedirectURL: s.base + oidcauth.CallbackPath, DefaultTenant: tenantA,
		Mappings: []oidcauth.Mapping{
			{Value: tenantA + ":viewers", Tenant: tenantA, Role: "viewer"},
			{Value: tenantA + ":approvers", Tenant: tenantA, Role: "approver"},
		},
		AllowPrivate: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}
	auth, err := oidcauth.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return auth
}

// observe connects as tenant A's observer and subscribes to A's events.
func (s *suite) observe(t *testing.T) {
	t.Helper()
	s.observerViolations = make(chan error, 16)
	s.observer = s.fleet.ConnectAs(t, fleettest.ObserverUser(tenantA), nats.PermissionErrOnSubscribe(true),
		nats.ErrorHandler(violationsTo(s.observerViolations)))
	var err error
	if s.observed, err = s.observer.SubscribeSync(s.fleet.Queue.Subjects().TenantEvents(tenantA)); err != nil {
		t.Fatal(err)
	}
	if err := s.observer.Flush(); err != nil {
		t.Fatal(err)
	}
}

// violationsTo is a NATS error handler passing permission violations on.
func violationsTo(ch chan<- error) nats.ErrHandler {
	return func(_ *nats.Conn, _ *nats.Subscription, err error) {
		if errors.Is(err, nats.ErrPermissionViolation) {
			select {
			case ch <- err:
			default:
			}
		}
	}
}

func listen(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

func serve(t *testing.T, ln net.Listener, h http.Handler) {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
}

// client is an API client of the single sign-on face with token.
func (s *suite) client(t *testing.T, token string) *client.Client {
	t.Helper()
	c, err := client.New(s.base, token, nil)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// destructive is a task whose first call is a destructive command (the
// worker's policy asks a person about it) and whose answer repeats the
// command's output.
func destructive(title string) fleet.TaskSpec {
	return fleettest.Spec(title,
		fleettest.Step{Calls: []fleettest.Call{fleettest.Shell("git reset --hard 2>/dev/null; echo ran-" + title)}},
		fleettest.Step{Text: "results: {{results}}"})
}

// submitPending submits spec as who and waits until the task waits for
// the approval of its call.
func (s *suite) submitPending(t *testing.T, who string, spec fleet.TaskSpec) (uuid.UUID, fleet.PendingApproval) {
	t.Helper()
	sub, err := s.clients[who].Submit(context.Background(), spec)
	if err != nil {
		t.Fatalf("%s submits: %v", who, err)
	}
	task := s.fleet.WaitFor("a pending approval", sub.Task.ID, func(t store.Task) bool {
		wf, err := fleet.DecodeWaitingFor(t.WaitingFor)
		return t.State == store.TaskWaiting && err == nil && len(wf.Approvals) > 0
	})
	wf, err := fleet.DecodeWaitingFor(task.WaitingFor)
	if err != nil {
		t.Fatal(err)
	}
	return task.ID, wf.Approvals[0]
}

// requestLog records what dev mode's face answered, to tell a request
// refused from one that never arrived.
type requestLog struct {
	next http.Handler
	mu   sync.Mutex
	seen []seenRequest
}

type seenRequest struct {
	method, path, origin, fetchSite, contentType string
	status                                       int
}

func (l *requestLog) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
	l.next.ServeHTTP(sw, r)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seen = append(l.seen, seenRequest{method: r.Method, path: r.URL.Path, origin: r.Header.Get("Origin"),
		fetchSite: r.Header.Get("Sec-Fetch-Site"), contentType: r.Header.Get("Content-Type"), status: sw.status})
}

func (l *requestLog) requests() []seenRequest {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]seenRequest(nil), l.seen...)
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

// Flush passes on, for event streams.
func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// queueConfig is the layout the fleet's components open (the harness's).
func (s *suite) queueConfig() queue.Config { return s.fleet.Queue.Config() }
