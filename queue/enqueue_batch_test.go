package queue_test

import (
	"fmt"
	"testing"

	"github.com/agentfleet/agentfleet/queue"
)

// TestSendBatch: a batch larger than one publish window lands whole, one
// result per message in order; a repeated message id is a duplicate of the
// first; a bad message fails alone.
func TestSendBatch(t *testing.T) {
	b := setup(t, queue.Config{})
	msgs := make([]queue.Outgoing, 2500)
	for i := range msgs {
		id := fmt.Sprintf("t%d", i)
		msgs[i] = queue.Outgoing{To: queue.ToQueue("default"), Msg: startMsg(id), MsgID: "start:" + id}
	}
	msgs[2000].MsgID = msgs[10].MsgID          // a retried message
	msgs[1500].To = queue.ToQueue("no spaces") // not a queue name
	res := b.client.SendBatch(b.ctx, msgs)
	if len(res) != len(msgs) {
		t.Fatalf("%d results for %d messages", len(res), len(msgs))
	}
	seqs := map[uint64]int{}
	for i, r := range res {
		switch {
		case i == 1500:
			if r.Err == nil {
				t.Fatalf("message to an invalid queue: %+v, want an error", r)
			}
		case r.Err != nil:
			t.Fatalf("message %d: %v", i, r.Err)
		case i == 2000:
			if !r.Duplicate || r.StreamSeq != res[10].StreamSeq {
				t.Fatalf("repeated message id: %+v, want a duplicate of seq %d", r, res[10].StreamSeq)
			}
		default:
			if r.Duplicate {
				t.Fatalf("message %d reported a duplicate", i)
			}
			if j, ok := seqs[r.StreamSeq]; ok {
				t.Fatalf("messages %d and %d share stream seq %d", j, i, r.StreamSeq)
			}
			seqs[r.StreamSeq] = i
		}
	}
	if _, err := b.client.NewPuller(b.ctx, queue.PullerConfig{Queues: []string{"default"}}); err != nil {
		t.Fatal(err)
	}
	lag, err := b.client.QueueLag(b.ctx, "default")
	if err != nil {
		t.Fatal(err)
	}
	if lag.Total() != uint64(len(msgs)-2) {
		t.Fatalf("queue holds %d messages, want %d", lag.Total(), len(msgs)-2)
	}
}
