package queue_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentfleet/agentfleet/internal/testenv"
	"github.com/agentfleet/agentfleet/queue"
)

// enqueueKey enqueues count start messages named prefix-i under key.
func enqueueKey(t *testing.T, b *bundle, prefix, key string, count int) {
	t.Helper()
	for i := range count {
		id := fmt.Sprintf("%s-%d", prefix, i)
		if _, err := b.client.Send(b.ctx, queue.ToQueueFor("default", 0, key), startMsg(id), ""); err != nil {
			t.Fatal(err)
		}
	}
}

func TestServeSharesSlotsBetweenKeysByWeight(t *testing.T) {
	b := setup(t, queue.Config{})
	p := newKeyedPuller(t, b, map[string]queue.KeyLimit{"heavy": {Weight: 2}})
	enqueueKey(t, b, "a", "a", 30) // a big backlog first
	enqueueKey(t, b, "heavy", "heavy", 20)
	enqueueKey(t, b, "b", "b", 5) // a small tenant after it
	order := serveOrder(t, b, p, 20)[:20]
	count := map[string]int{}
	for _, id := range order {
		count[strings.SplitN(id, "-", 2)[0]]++
	}
	// Weights 1, 2, 1: of 20 starts, a and b get 5 each, heavy 10 (one
	// either way for the order the loop met the keys in).
	if count["b"] < 4 || count["a"] < 4 || count["heavy"] < 9 || count["heavy"] > 11 {
		t.Fatalf("first 20 starts by key %v (%v); want a 5, heavy 10, b 5", count, order)
	}
}

func TestAKeyAtItsMaximumHoldsWithoutSpendingDeliveries(t *testing.T) {
	b := setup(t, queue.Config{})
	p := newKeyedPuller(t, b, map[string]queue.KeyLimit{"capped": {MaxRunning: 2}})
	enqueueKey(t, b, "capped", "capped", 6)
	enqueueKey(t, b, "free", "free", 4)
	slots, err := queue.NewSlots(10)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(b.ctx)
	var held running // never settled while the test looks: the tasks run
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = p.Serve(ctx, slots, held.add, func(err error) { t.Errorf("pull: %v", err) })
	}()
	testenv.Eventually(t, waitTimeout, "the free key's 4 and the capped key's 2 to run", func() bool {
		r := held.byPrefix()
		return r["free"] == 4 && r["capped"] == 2
	})
	// The capped key holds 4 queued (the gate gives no more tokens), and 4
	// slots stay free.
	var first *queue.Delivery
	for _, d := range held.take() {
		if first == nil && strings.HasPrefix(d.Message.TaskID, "capped-") {
			first = d
			continue
		}
		held.add(d)
	}
	if err := first.Ack(ctx); err != nil { // one task ends: its key may start one more
		t.Fatal(err)
	}
	testenv.Eventually(t, waitTimeout, "one more capped task after one ended", func() bool {
		return held.byPrefix()["capped"] >= 2
	})
	if r := held.byPrefix(); r["capped"] != 2 {
		t.Fatalf("running by key %v after one of 2 capped ended; want capped 2", r)
	}
	testenv.Eventually(t, waitTimeout, "the capped key's queued tasks to hold no slot", func() bool {
		return slots.InUse() <= 7 // 6 run; an idle loop may hold one more in a waiting pull
	})
	cancel()
	<-done
	for _, d := range held.take() {
		if d.NumDelivered != 1 {
			t.Errorf("%s delivered %d times: a delivery was spent", d.Message.TaskID, d.NumDelivered)
		}
		d.Abandon()
	}
}

// QueueLag counts every subject of a queue: bands and keys, also a key no
// worker has made a consumer for yet.
func TestQueueLagCountsKeysAndBands(t *testing.T) {
	b := setup(t, queue.Config{})
	newDefaultPuller(t, b) // makes the band consumers, not the keys'
	enqueueKey(t, b, "k", "team", 3)
	enqueueAt(t, b, "high", 5, 2)
	if _, err := b.client.Enqueue(b.ctx, "default", startMsg("plain"), ""); err != nil {
		t.Fatal(err)
	}
	if _, err := b.client.Enqueue(b.ctx, "other", startMsg("elsewhere"), ""); err != nil {
		t.Fatal(err)
	}
	waitCounted(t, b.client.QueueLag, "default", 6)
}

// Pull, one message at a time, finds keyed work too: a root task's
// messages are keyed, and a Pull that asked only the unkeyed bands would
// wait for ever.
func TestPullFindsKeyedWork(t *testing.T) {
	b := setup(t, queue.Config{})
	p := newDefaultPuller(t, b)
	enqueueKey(t, b, "team", "team-a", 1)
	d, err := p.Pull(b.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if d.Message.TaskID != "team-0" {
		t.Fatalf("Pull gave %q, want team-0", d.Message.TaskID)
	}
	if err := d.Ack(b.ctx); err != nil {
		t.Fatal(err)
	}
}

// TestAFrontLaneGoesBeforeItsLevel: messages on a key's front lane (tasks
// a pause held, released) start before everything else queued at their
// level, whatever key, and in the order they were published; a higher
// level still goes first.
func TestAFrontLaneGoesBeforeItsLevel(t *testing.T) {
	b := setup(t, queue.Config{})
	p := newDefaultPuller(t, b)
	enqueueKey(t, b, "team", "team", 3)
	enqueueKey(t, b, "other", "other", 2)
	for i := range 2 {
		to := queue.ToQueueFor("default", 0, "team").Front()
		if _, err := b.client.Send(b.ctx, to, startMsg(fmt.Sprintf("released-%d", i)), ""); err != nil {
			t.Fatal(err)
		}
	}
	enqueueAt(t, b, "urgent", 9, 1)
	waitCounted(t, b.client.QueueLag, "default", 8)
	order := serveOrder(t, b, p, 8)
	if got := strings.Join(order[:3], " "); got != "urgent-0 released-0 released-1" {
		t.Fatalf("order %v: want the higher level, then the front lane in order, then the rest", order)
	}
}

// enqueueKeyAt enqueues count start messages named prefix-i under key at
// level priority, on the key's front lane when front is set.
func enqueueKeyAt(t *testing.T, b *bundle, prefix, key string, priority, count int, front bool) {
	t.Helper()
	to := queue.ToQueueFor("default", priority, key)
	if front {
		to = to.Front()
	}
	for i := range count {
		if _, err := b.client.Send(b.ctx, to, startMsg(fmt.Sprintf("%s-%d", prefix, i)), ""); err != nil {
			t.Fatal(err)
		}
	}
}

// A key with a maximum keeps the order of its own tasks: its higher level
// first, then its front lane, then the rest, each in publication order;
// and every settled task hands its token back (with a maximum of 1, the
// next would never start otherwise).
func TestACappedKeyKeepsPriorityAndFrontLane(t *testing.T) {
	b := setup(t, queue.Config{})
	p := newKeyedPuller(t, b, map[string]queue.KeyLimit{"team": {MaxRunning: 1}})
	enqueueKeyAt(t, b, "low", "team", 0, 2, false)
	enqueueKeyAt(t, b, "released", "team", 0, 1, true)
	enqueueKeyAt(t, b, "high", "team", 7, 2, false)
	waitCounted(t, b.client.QueueLag, "default", 5)
	order := serveOrder(t, b, p, 5)
	if got := strings.Join(order, " "); got != "high-0 high-1 released-0 low-0 low-1" {
		t.Fatalf("order %q: want the higher level, the front lane, then the rest", got)
	}
}

// running are deliveries kept unsettled (their tasks run), safe for
// concurrent use.
type running struct {
	mu sync.Mutex
	ds []*queue.Delivery
}

func (r *running) add(d *queue.Delivery) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ds = append(r.ds, d)
}

// take returns the deliveries so far and forgets them.
func (r *running) take() []*queue.Delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.ds
	r.ds = nil
	return out
}

// first is the first delivery.
func (r *running) first() *queue.Delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ds[0]
}

// byPrefix counts the deliveries by the part of their task id before the
// first '-'.
func (r *running) byPrefix() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]int{}
	for _, d := range r.ds {
		out[strings.SplitN(d.Message.TaskID, "-", 2)[0]]++
	}
	return out
}

// serveHeld serves queue "default" with p and slots sessions, keeping
// every delivery unsettled in r; the returned stop ends the loop.
func serveHeld(t *testing.T, b *bundle, p *queue.Puller, slots int, r *running) (stop func()) {
	t.Helper()
	s, err := queue.NewSlots(slots)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(b.ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = p.Serve(ctx, s, r.add, func(err error) { t.Errorf("pull: %v", err) })
	}()
	return func() { cancel(); <-done }
}

// A key's maximum holds across its priority levels, its front lane and
// workers: two workers with free slots start 2 of a key whose tasks sit
// at three levels, the higher first, and one more once one ends.
func TestAKeysMaximumHoldsAcrossLevelsAndWorkers(t *testing.T) {
	b := setup(t, queue.Config{})
	keys := map[string]queue.KeyLimit{"team": {MaxRunning: 2}}
	enqueueKeyAt(t, b, "l0", "team", 0, 3, false)
	enqueueKeyAt(t, b, "front", "team", 0, 1, true)
	enqueueKeyAt(t, b, "l5", "team", 5, 1, false)
	enqueueKeyAt(t, b, "l9", "team", 9, 1, false)
	var held running
	var stops []func()
	for range 2 {
		stops = append(stops, serveHeld(t, b, newKeyedPuller(t, b, keys), 8, &held))
	}
	testenv.Eventually(t, waitTimeout, "two of the key's tasks to run", func() bool {
		r := held.byPrefix()
		return r["l9"]+r["l5"]+r["front"]+r["l0"] >= 2
	})
	// A task of another key queued now starts: the loops went round since.
	enqueueKey(t, b, "free", "free", 1)
	testenv.Eventually(t, waitTimeout, "the other key's task to run", func() bool { return held.byPrefix()["free"] == 1 })
	if r := held.byPrefix(); r["l9"] != 1 || r["l5"] != 1 || r["front"]+r["l0"] != 0 {
		t.Fatalf("running by level %v; want l9 and l5 only (a maximum of 2, the highest first)", r)
	}
	if err := held.first().Ack(b.ctx); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, waitTimeout, "the front lane's task after one ended", func() bool { return held.byPrefix()["front"] == 1 })
	enqueueKey(t, b, "free2", "free2", 1)
	testenv.Eventually(t, waitTimeout, "another key's task to run", func() bool { return held.byPrefix()["free2"] == 1 })
	if r := held.byPrefix(); r["l0"] != 0 {
		t.Fatalf("running by level %v after one of 2 ended; want one more (the front lane's)", r)
	}
	for _, stop := range stops {
		stop()
	}
	for _, d := range held.take()[1:] {
		d.Abandon()
	}
}

// A task whose worker is lost (Abandon) keeps its key's token until
// AckWait, then both come back: the key does not lose a slot for ever.
func TestALostTaskGivesItsTokenBackAfterAckWait(t *testing.T) {
	b := setup(t, queue.Config{AckWait: time.Second})
	p := newKeyedPuller(t, b, map[string]queue.KeyLimit{"team": {MaxRunning: 1}})
	enqueueKey(t, b, "team", "team", 1)
	var held running
	stop := serveHeld(t, b, p, 4, &held)
	defer stop()
	testenv.Eventually(t, waitTimeout, "the task to run", func() bool { return held.byPrefix()["team"] == 1 })
	held.first().Abandon()
	testenv.Eventually(t, waitTimeout, "the task again after AckWait", func() bool { return held.byPrefix()["team"] == 2 })
	d := held.take()[1]
	if err := d.Ack(b.ctx); err != nil {
		t.Fatal(err)
	}
	if d.Message.TaskID != "team-0" || d.NumDelivered != 2 {
		t.Fatalf("after AckWait came %s (delivery %d); want team-0 again", d.Message.TaskID, d.NumDelivered)
	}
}

// tasksStream opens TASKS on b's connection.
func tasksStream(t *testing.T, b *bundle) jetstream.Stream {
	t.Helper()
	js, err := jetstream.New(b.nc)
	if err != nil {
		t.Fatal(err)
	}
	st, err := js.Stream(b.ctx, "TASKS")
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// tokensOn counts the tokens of key's gate in queue "default".
func tokensOn(t *testing.T, b *bundle, key string) uint64 {
	t.Helper()
	st := tasksStream(t, b)
	subj := b.client.Subjects().Gate("default", key)
	info, err := st.Info(b.ctx, jetstream.WithSubjectFilter(subj))
	if err != nil {
		t.Fatal(err)
	}
	return info.State.Subjects[subj]
}

// A gate holds its maximum of tokens: a lowered maximum retires those
// over it as they come back; tokens lost (purged) are made again.
func TestAGateKeepsItsMaximumOfTokens(t *testing.T) {
	b := setup(t, queue.Config{})
	newKeyedPuller(t, b, nil)
	enqueueKey(t, b, "first", "team", 1)
	serveOrder(t, b, newKeyedPuller(t, b, map[string]queue.KeyLimit{"team": {MaxRunning: 3}}), 1)
	if n := tokensOn(t, b, "team"); n != 3 {
		t.Fatalf("a key with a maximum of 3 has %d tokens", n)
	}
	// The operator lowers the maximum to 1: a worker with the new setting
	// runs one at a time, and the tokens go down to 1.
	enqueueKey(t, b, "team", "team", 4)
	var held running
	p := newKeyedPuller(t, b, map[string]queue.KeyLimit{"team": {MaxRunning: 1}})
	stop := serveHeld(t, b, p, 8, &held)
	testenv.Eventually(t, waitTimeout, "one task to run", func() bool { return held.byPrefix()["team"] == 1 })
	enqueueKey(t, b, "free", "free", 1)
	testenv.Eventually(t, waitTimeout, "another key's task to run", func() bool { return held.byPrefix()["free"] == 1 })
	if r := held.byPrefix(); r["team"] != 1 {
		t.Fatalf("running %v with a maximum lowered to 1", r)
	}
	for _, d := range held.take() {
		if err := d.Ack(b.ctx); err != nil {
			t.Error(err)
		}
	}
	testenv.Eventually(t, waitTimeout, "the tokens to go down to 1", func() bool { return tokensOn(t, b, "team") == 1 })
	stop()
	for _, d := range held.take() { // started after the others ended
		d.Abandon()
	}

	// The tokens are purged (an operator's mistake): the same worker's
	// next discovery makes them again and the key's work goes on.
	if err := tasksStream(t, b).Purge(b.ctx, jetstream.WithPurgeSubject(b.client.Subjects().Gate("default", "team"))); err != nil {
		t.Fatal(err)
	}
	order := serveOrder(t, b, p, 1)
	if !strings.HasPrefix(order[0], "team-") || tokensOn(t, b, "team") != 1 {
		t.Fatalf("after the purge: served %v with %d tokens; want work and 1 token", order, tokensOn(t, b, "team"))
	}
}

// NewPuller refuses a key setting it cannot keep, naming the key.
func TestNewPullerRefusesBadKeySettings(t *testing.T) {
	b := setup(t, queue.Config{})
	for _, tc := range []struct {
		pc   queue.PullerConfig
		want string
	}{
		{queue.PullerConfig{Keys: map[string]queue.KeyLimit{"k": {Weight: -1}}}, `concurrency key "k": max running and weight must be >= 0`},
		{queue.PullerConfig{Keys: map[string]queue.KeyLimit{"k": {MaxRunning: queue.MaxKeyRunning + 1}}}, `concurrency key "k": max running must be at most 10000`},
		{queue.PullerConfig{DefaultKey: queue.KeyLimit{MaxRunning: -1}}, "the default concurrency key: max running and weight must be >= 0"},
	} {
		tc.pc.Queues = []string{"default"}
		if _, err := b.client.NewPuller(b.ctx, tc.pc); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("NewPuller(%+v) = %v, want an error containing %q", tc.pc, err, tc.want)
		}
	}
}

// keyConsumerOf returns the consumer of subject on TASKS, nil when there
// is none.
func keyConsumerOf(t *testing.T, b *bundle, subject string) *jetstream.ConsumerInfo {
	t.Helper()
	lister := tasksStream(t, b).ListConsumers(b.ctx)
	var found *jetstream.ConsumerInfo
	for info := range lister.Info() {
		if info.Config.FilterSubject == subject {
			found = info
		}
	}
	if err := lister.Err(); err != nil {
		t.Fatal(err)
	}
	return found
}

// A capped key at its maximum gets no pull requests while its task runs,
// for longer than its consumer's inactivity threshold and than AckWait
// plus the threshold: the server keeps the consumer all the same (the
// task's heartbeats count as activity), so the task settles on its first
// delivery and the key's next task starts, delivered once. With nothing
// running or pulling, the threshold does remove the consumer.
func TestACappedKeysConsumerOutlivesItsThresholdWhileItsTaskRuns(t *testing.T) {
	const threshold, ackWait = time.Second, time.Second
	b := setup(t, queue.Config{AckWait: ackWait, KeyInactiveThreshold: threshold})
	p := newKeyedPuller(t, b, map[string]queue.KeyLimit{"team": {MaxRunning: 1}})
	enqueueKey(t, b, "team", "team", 2)
	var held running
	stop := serveHeld(t, b, p, 4, &held)
	stopped := false
	defer func() {
		if !stopped {
			stop()
		}
	}()
	testenv.Eventually(t, waitTimeout, "the key's first task to run", func() bool { return held.byPrefix()["team"] == 1 })
	subj := b.client.Subjects().TasksKey("default", 0, "team")
	before := keyConsumerOf(t, b, subj)
	if before == nil {
		t.Fatalf("no consumer of %s while its task runs", subj)
	}
	if got := before.Config.InactiveThreshold; got != threshold {
		t.Fatalf("the key's consumer has InactiveThreshold %s, want %s", got, threshold)
	}

	// The point is the time passing: no pulls on the key for AckWait plus
	// twice the threshold (a delivery's AckWait alone covers less).
	time.Sleep(ackWait + 2*threshold)
	after := keyConsumerOf(t, b, subj)
	if after == nil || !after.Created.Equal(before.Created) {
		t.Fatalf("the key's consumer was deleted under its running task (now %+v)", after)
	}
	ds := held.take()
	if len(ds) != 1 || ds[0].Message.TaskID != "team-0" || ds[0].NumDelivered != 1 {
		for _, d := range ds {
			t.Errorf("running %s, delivery %d", d.Message.TaskID, d.NumDelivered)
		}
		t.Fatal("want team-0 alone, on its first delivery")
	}
	if err := ds[0].Ack(b.ctx); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, waitTimeout, "the key's next task after the first ended", func() bool { return held.byPrefix()["team"] == 1 })
	next := held.take()[0]
	if next.Message.TaskID != "team-1" || next.NumDelivered != 1 {
		t.Fatalf("next came %s (delivery %d); want team-1 on its first delivery", next.Message.TaskID, next.NumDelivered)
	}
	if err := next.Ack(b.ctx); err != nil {
		t.Fatal(err)
	}
	if info := keyConsumerOf(t, b, subj); info == nil || info.Delivered.Consumer != 2 || info.NumAckPending != 0 {
		t.Fatalf("the key's consumer after both ended: %+v; want 2 deliveries, none pending", info)
	}

	stop()
	stopped = true
	testenv.Eventually(t, waitTimeout, "the threshold to remove the idle consumer", func() bool { return keyConsumerOf(t, b, subj) == nil })
}
