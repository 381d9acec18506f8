package dispatcher

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/api"
	"github.com/agentfleet/agentfleet/fleet/client"
	"github.com/agentfleet/agentfleet/store"
)

// BenchmarkAPISubmitBatch measures POST /v1/tasks/batch of 1000 tasks
// (validate, one store transaction, 1000 JetStream publishes) on SQLite and
// Postgres.
func BenchmarkAPISubmitBatch(b *testing.B) {
	for _, s := range []struct {
		name string
		mk   storeMaker
	}{{"sqlite", sqliteStore}, {"postgres", postgresStore}} {
		b.Run(s.name, func(b *testing.B) {
			bu := setupAPI(b, s.mk)
			specs := make([]fleet.TaskSpec, 1000)
			for i := range specs {
				specs[i] = validSpec(fmt.Sprintf("task %d", i))
			}
			for b.Loop() {
				if _, err := bu.client.SubmitBatch(context.Background(), specs); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*len(specs))/b.Elapsed().Seconds(), "tasks/s")
		})
	}
}

// BenchmarkValidate measures the validation of one spec.
func BenchmarkValidate(b *testing.B) {
	s := fleet.TaskSpec{Prompt: "fix the flaky test", Profile: "openai", Labels: map[string]string{"team": "payments"},
		Environment: fleet.Environment{Kind: fleet.EnvSSH, Host: "build1", User: "ci", KeyRef: "ci", WorkingDir: "/srv"}}
	for b.Loop() {
		if err := s.ValidateSubmission(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAPIAuth compares one submit and one read per iteration
// without authentication (anonymous), with the bootstrap token (a
// constant-time compare) and with an API token (one indexed store read
// per request), on SQLite and Postgres. Every submit is audited in all
// three.
func BenchmarkAPIAuth(b *testing.B) {
	for _, s := range []struct {
		name string
		mk   storeMaker
	}{{"sqlite", sqliteStore}, {"postgres", postgresStore}} {
		b.Run(s.name, func(b *testing.B) {
			bu := setupAPI(b, s.mk)
			tok, err := bu.client.CreateToken(context.Background(), api.TokenRequest{Name: "bench", Grants: map[string]string{fleet.DefaultTenant: "submitter"}})
			if err != nil {
				b.Fatal(err)
			}
			clients := map[string]*client.Client{"bootstrap": bu.client, "off": bu.clientWith(b, APIOptions{})}
			if clients["api-token"], err = client.New(bu.srv.URL, tok.Token, nil); err != nil {
				b.Fatal(err)
			}
			for _, name := range []string{"off", "bootstrap", "api-token"} {
				c := clients[name]
				b.Run(name, func(b *testing.B) {
					ctx := context.Background()
					for b.Loop() {
						sub, err := c.Submit(ctx, validSpec("bench"))
						if err != nil {
							b.Fatal(err)
						}
						if _, err := c.Get(ctx, sub.Task.ID); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "submit+get/s")
				})
			}
		})
	}
}

// BenchmarkAuthenticate measures the authentication step alone, in front
// of a handler that does nothing: what each request pays for it.
func BenchmarkAuthenticate(b *testing.B) {
	for _, s := range []struct {
		name string
		mk   storeMaker
	}{{"sqlite", sqliteStore}, {"postgres", postgresStore}} {
		b.Run(s.name, func(b *testing.B) {
			st := s.mk(b)
			secret, hash := NewToken()
			if _, err := st.CreateToken(context.Background(), store.CreateTokenParams{Name: "bench", Hash: hash,
				Grants: map[string]string{"*": "viewer"}, DefaultTenant: "default", CreatedBy: "bench"}); err != nil {
				b.Fatal(err)
			}
			v1 := http.NewServeMux()
			noop := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
			v1.Handle("/v1/", noop)
			for _, c := range []struct{ name, opt, bearer string }{{"off", "", ""}, {"bootstrap", testToken, testToken}, {"api-token", testToken, secret}} {
				a := &handlers{opts: APIOptions{Token: c.opt}, principals: st, tickets: newTickets(c.opt, 0)}
				h := a.authenticate(noop, v1)
				b.Run(c.name, func(b *testing.B) {
					for b.Loop() {
						req := httptest.NewRequest(http.MethodGet, "/v1/counts", nil)
						if c.bearer != "" {
							req.Header.Set("Authorization", "Bearer "+c.bearer)
						}
						rec := httptest.NewRecorder()
						h.ServeHTTP(rec, req)
						if rec.Code != http.StatusOK {
							b.Fatalf("%d %s", rec.Code, rec.Body)
						}
					}
				})
			}
		})
	}
}

// BenchmarkAPISubmitBatchAuth is the submission of agentfleet-dev bench
// (batches of 100) without authentication and with an API token, the two
// alternating so that both see the same store (its tables grow as it
// runs), each first every other time: it reports the throughput of each
// and the cost of the token.
func BenchmarkAPISubmitBatchAuth(b *testing.B) {
	bu := setupAPI(b, sqliteStore)
	tok, err := bu.client.CreateToken(context.Background(), api.TokenRequest{Name: "bench", Grants: map[string]string{fleet.DefaultTenant: "submitter"}})
	if err != nil {
		b.Fatal(err)
	}
	withToken, err := client.New(bu.srv.URL, tok.Token, nil)
	if err != nil {
		b.Fatal(err)
	}
	specs := make([]fleet.TaskSpec, 100)
	for i := range specs {
		specs[i] = validSpec(fmt.Sprintf("task %d", i))
	}
	clients := []*client.Client{bu.clientWith(b, APIOptions{}), withToken}
	var spent [2]time.Duration
	for n := 0; b.Loop(); n++ {
		for k := range clients {
			i := (k + n) % 2 // each goes first every other time
			c := clients[i]
			start := time.Now()
			if _, err := c.SubmitBatch(context.Background(), specs); err != nil {
				b.Fatal(err)
			}
			spent[i] += time.Since(start)
		}
	}
	off, on := float64(b.N*len(specs))/spent[0].Seconds(), float64(b.N*len(specs))/spent[1].Seconds()
	b.ReportMetric(off, "off-tasks/s")
	b.ReportMetric(on, "token-tasks/s")
	b.ReportMetric(100*(off-on)/off, "%slower")
}
