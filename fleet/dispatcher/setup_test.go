package dispatcher

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/api"
	"github.com/agentfleet/agentfleet/fleet/client"
	"github.com/agentfleet/agentfleet/fleet/fleettest"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/queue/natstest"
	"github.com/agentfleet/agentfleet/store"
)

const testToken = "s3cret-token"

// testWait bounds every wait in these tests; generous for loaded machines.
const testWait = 30 * time.Second

// apiBundle is a dispatcher with its API on a real store and a real
// in-process NATS server, without workers.
type apiBundle struct {
	d      *Dispatcher
	st     store.Store
	q      *queue.Client
	nc     *nats.Conn
	js     jetstream.JetStream
	srv    *httptest.Server
	client *client.Client
}

type storeMaker func(t testing.TB) store.Store

func sqliteStore(t testing.TB) store.Store { return fleettest.SQLiteStore(t) }

func postgresStore(t testing.TB) store.Store {
	st, _ := fleettest.PostgresStore(t)
	return st
}

// bothStores runs f against SQLite and Postgres.
func bothStores(t *testing.T, f func(t *testing.T, mk storeMaker)) {
	t.Run("sqlite", func(t *testing.T) { t.Parallel(); f(t, sqliteStore) })
	t.Run("postgres", func(t *testing.T) { t.Parallel(); f(t, postgresStore) })
}

func setupAPI(t testing.TB, mk storeMaker) *apiBundle {
	t.Helper()
	return setupAPIWith(t, mk, nil)
}

// setupAPIWith is setupAPI with the dispatcher's configuration adjusted by edit.
func setupAPIWith(t testing.TB, mk storeMaker, edit func(*Config)) *apiBundle {
	t.Helper()
	ns := natstest.Start(t)
	nc := ns.Connect(t)
	ctx, cancel := context.WithTimeout(context.Background(), testWait)
	defer cancel()
	q, err := queue.Open(ctx, nc, queue.Config{ControlTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	st := mk(t)
	cfg := Config{StatsInterval: 50 * time.Millisecond, StatsWindow: time.Second}
	if edit != nil {
		edit(&cfg)
	}
	d, err := New(st, q, cfg)
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- d.Run(runCtx) }()
	srv := httptest.NewServer(d.Handler(APIOptions{Token: testToken, SSEDonePoll: 20 * time.Millisecond, SSEDrainIdle: 200 * time.Millisecond}))
	c, err := client.New(srv.URL, testToken, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
		stop()
		if err := <-ran; err != nil {
			t.Errorf("Dispatcher.Run: %v", err)
		}
	})
	return &apiBundle{d: d, st: st, q: q, nc: nc, js: js, srv: srv, client: c}
}

// clientWith serves the bundle's dispatcher on a second server with opts
// and returns a client of it.
func (b *apiBundle) clientWith(t testing.TB, opts APIOptions) *client.Client {
	t.Helper()
	srv := httptest.NewServer(b.d.Handler(opts))
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
	})
	c, err := client.New(srv.URL, opts.Token, nil)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// submit submits a valid task with prompt through the API client and returns its id.
func (b *apiBundle) submit(t testing.TB, prompt string) uuid.UUID {
	t.Helper()
	sub, err := b.client.Submit(context.Background(), validSpec(prompt))
	if err != nil {
		t.Fatal(err)
	}
	return sub.Task.ID
}

// tasksInStream returns the number of messages on the TASKS stream.
func (b *apiBundle) tasksInStream(t testing.TB) uint64 {
	t.Helper()
	s, err := b.js.Stream(context.Background(), b.q.Config().TasksStream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return info.State.Msgs
}

// storedTasks counts the tasks in the store.
func (b *apiBundle) storedTasks(t *testing.T) int64 {
	t.Helper()
	counts, err := b.st.CountTasks(context.Background(), store.CountTasksParams{})
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, c := range counts {
		n += c
	}
	return n
}

// rawCall sends body (a string or a value to encode) and returns the status
// and the decoded error detail (if any) and the raw body.
func (b *apiBundle) rawCall(t *testing.T, method, path string, body any, token string) (int, api.ErrorDetail, []byte) {
	t.Helper()
	var r io.Reader
	switch v := body.(type) {
	case nil:
	case string:
		r = bytes.NewBufferString(v)
	default:
		raw, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		r = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, b.srv.URL+path, r)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != nil || method == http.MethodPost || method == http.MethodPut {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	raw, _ := io.ReadAll(resp.Body)
	var eb api.ErrorBody
	_ = json.Unmarshal(raw, &eb)
	return resp.StatusCode, eb.Error, raw
}

func validSpec(prompt string) fleet.TaskSpec {
	return fleet.TaskSpec{Prompt: prompt, Profile: "openai"}
}
