package queue_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/agentfleet/agentfleet/internal/testenv"
	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/queue/natstest"
)

// TestMain fails the run if a goroutine outlived the tests. A pull
// request's reader in nats.go is not one: after a cancelled pull it reads
// on until the request expires on the server, at most a pull wait and a
// second later (fetchBatch in serve.go).
func TestMain(m *testing.M) {
	testenv.VerifyTestMain(m)
}

// waitTimeout bounds every wait in these tests: generous, for loaded machines.
const waitTimeout = 30 * time.Second

// bundle is what most tests need: one server, one connection, one Client.
type bundle struct {
	srv    *natstest.Server
	nc     *nats.Conn
	client *queue.Client
	ctx    context.Context
}

// setup starts a server and opens a Client with cfg (zero fields take defaults).
func setup(t *testing.T, cfg queue.Config) *bundle {
	t.Helper()
	srv := natstest.Start(t)
	nc := srv.Connect(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*waitTimeout)
	t.Cleanup(cancel)
	c, err := queue.Open(ctx, nc, cfg)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return &bundle{srv: srv, nc: nc, client: c, ctx: ctx}
}

// openClient opens a second Client with its own connection to the same server.
func (b *bundle) openClient(t *testing.T, cfg queue.Config) *queue.Client {
	t.Helper()
	c, err := queue.Open(b.ctx, b.srv.Connect(t), cfg)
	if err != nil {
		t.Fatalf("Open second client: %v", err)
	}
	return c
}

func startMsg(taskID string) queue.TaskMessage {
	return queue.TaskMessage{Type: queue.MsgStart, TaskID: taskID}
}

// pull pulls one delivery with a deadline.
func pull(t *testing.T, p *queue.Puller) *queue.Delivery {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	d, err := p.Pull(ctx)
	if err != nil {
		t.Fatalf("Pull: %v", err)
	}
	return d
}

func natsMsg(subject string, data []byte) *nats.Msg {
	m := nats.NewMsg(subject)
	m.Data = data
	return m
}

// waitCounted waits until a consumer's lag (QueueLag or WorkerLag of name) counts n messages
// not yet delivered. The server counts a new message into a consumer shortly after it
// acknowledges the publish, so a test whose outcome depends on that count (a no-wait pull, a
// lag reading after deliveries) waits for it first.
func waitCounted(t *testing.T, lag func(context.Context, string) (queue.Lag, error), name string, n uint64) {
	t.Helper()
	testenv.Eventually(t, waitTimeout, fmt.Sprintf("%s to count %d pending", name, n), func() bool {
		l, err := lag(context.Background(), name)
		return err == nil && l.Pending == n
	})
}
