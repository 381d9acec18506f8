package queue_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/agentfleet/agentfleet/internal/testenv"
	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/queue/natstest"
)

// On a replicated stream a publish whose message id another publish has
// in process is answered with error 10158: neither stored nor refused.
// Several processes publishing one id at once (the children of one wait
// ending together, each waking the parent) each get a result, one stored
// and the others duplicates, through Send as through SendBatch; before,
// all but one failed with that error.
func TestPublishesOfOneIDAtOnceAllSucceed(t *testing.T) {
	testenv.SkipIfShort(t, "starts a three-node cluster")
	cl := natstest.StartCluster(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 2*waitTimeout)
	defer cancel()
	var clients []*queue.Client
	for range 4 {
		c, err := queue.Open(ctx, cl.Connect(t), queue.Config{Replicas: 3})
		if err != nil {
			t.Fatal(err)
		}
		clients = append(clients, c)
	}
	const rounds = 20
	for round := range rounds {
		var (
			wg     sync.WaitGroup
			mu     sync.Mutex
			stored int
		)
		record := func(r queue.EnqueueResult, err error) {
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				t.Errorf("round %d: %v", round, err)
			} else if !r.Duplicate {
				stored++
			}
		}
		id := fmt.Sprint("resume:parent:", round)
		msg := startMsg(fmt.Sprint("parent-", round))
		for _, c := range clients {
			wg.Go(func() { record(c.Send(ctx, queue.ToQueue("default"), msg, id)) })
			wg.Go(func() {
				res := c.SendBatch(ctx, []queue.Outgoing{{To: queue.ToQueue("default"), Msg: msg, MsgID: id}})
				record(res[0].EnqueueResult, res[0].Err)
			})
		}
		wg.Wait()
		if stored != 1 {
			t.Fatalf("round %d: stored %d times, want once", round, stored)
		}
	}
}
