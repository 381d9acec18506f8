package queue

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentfleet/agentfleet/internal/jscas"
)

// Gates. A concurrency key with a maximum of running tasks
// (KeyLimit.MaxRunning) has a gate: that many token messages on one
// subject of TASKS, <prefix>.tasks.<queue>.gate.<key>, with a durable
// consumer of their own. A worker takes a token before it pulls a task
// of the key from any of the key's subjects (every priority level, and
// the front lane) and holds it exactly as long as the task's message:
// the delivery's heartbeats keep both, settling the task hands the token
// back (a nak, so the next worker can take it at once), and a worker that
// dies keeps both until AckWait, when the server hands both out again. So
// the key's running tasks across the fleet, whatever their priority, are
// never more than its tokens, and a key at its maximum spends no
// deliveries of its tasks: its tasks are not pulled at all.
//
// The tokens are kept at the maximum by whichever worker finds them short
// (at its first use of the gate, or when a discovery counts fewer on the
// subject): it appends them one at a time, each publish expecting the
// subject's last sequence it read, so two workers topping up at once
// never make one too many. A maximum lowered by the operator retires the
// tokens over it as they come back: the worker that takes one while the
// subject holds more than the maximum acknowledges it (the work-queue
// stream then deletes it) instead of using it. Every worker must carry
// the same key settings: two maximums would make and retire tokens in
// turn.

// gateToken is the level position's token of a gate's subject: it is no
// level (parseLevel), so a gate is never taken for a key's tasks.
const gateToken = "gate"

// Gate returns the subject of the tokens of key in queue:
// <prefix>.tasks.<queue>.gate.<key>.
func (s Subjects) Gate(queue, key string) string {
	return s.Tasks(queue) + "." + gateToken + "." + key
}

// gate is a capped key's tokens as one Puller knows them.
type gate struct {
	key     string
	max     int
	subject string
	src     *source      // the tokens' consumer
	excess  atomic.Int64 // tokens over max at the last count: retired as they are taken
}

// counted notes that g's subject holds have tokens: those over its
// maximum are retired as they are taken. It reports whether g is short.
func (g *gate) counted(have int) (short bool) {
	g.excess.Store(int64(max(have-g.max, 0)))
	return have < g.max
}

// gates are the gates a Puller uses, by subject.
type gates struct {
	mu sync.Mutex
	m  map[string]*gate
}

// gateOf returns the gate of key in queue q with max tokens, making its
// consumer and its tokens the first time.
func (p *Puller) gateOf(ctx context.Context, q, key string, max int) (*gate, error) {
	subj := p.c.subj.Gate(q, key)
	p.gates.mu.Lock()
	defer p.gates.mu.Unlock()
	if g := p.gates.m[subj]; g != nil {
		return g, nil
	}
	cfg := p.c.consumerConfig(keyConsumer(subj), subj)
	cfg.Description = "agentfleet workers taking the running tokens of " + subj
	cfg.MaxDeliver = -1 // a token goes round for ever
	// Above any count of tokens: at its MaxAckPending a consumer holds a
	// no-wait pull instead of answering it, and the tokens do the counting.
	cfg.MaxAckPending = MaxKeyRunning
	// No inactivity threshold: a consumer the server removed would forget
	// which tokens running tasks hold, and its successor would hand them
	// out again. A gate is kept as long as TASKS (a handful of bytes).
	g := &gate{key: key, max: max, subject: subj, src: &source{name: q, cfg: cfg}}
	if _, err := p.ensure(ctx, g.src); err != nil {
		return nil, err
	}
	if err := p.fillGate(ctx, g); err != nil {
		return nil, err
	}
	if p.gates.m == nil {
		p.gates.m = map[string]*gate{}
	}
	p.gates.m[subj] = g
	return g, nil
}

// fillTries bounds how often fillGate reads the tokens again after
// another worker appended one first.
const fillTries = 10

// fillGate appends tokens until g's subject holds its maximum (it notes
// an excess for taking to retire). Each append expects the last sequence
// read, so concurrent fills stop at the maximum.
func (p *Puller) fillGate(ctx context.Context, g *gate) error {
	st, err := p.c.js.Stream(ctx, p.c.cfg.TasksStream)
	if err != nil {
		return fmt.Errorf("queue: stream %s: %w", p.c.cfg.TasksStream, err)
	}
	for range fillTries {
		have, last, err := gateState(ctx, st, g.subject)
		if err != nil {
			return err
		}
		g.counted(have)
		for ; have < g.max; have++ {
			ack, err := p.c.js.Publish(ctx, g.subject, nil, jetstream.WithExpectLastSequencePerSubject(last))
			if jscas.Conflict(err) {
				break // another worker appended: count again
			}
			if err != nil {
				return fmt.Errorf("queue: a token on %s: %w", g.subject, err)
			}
			last = ack.Sequence
		}
		if have >= g.max {
			return nil
		}
	}
	return fmt.Errorf("queue: the tokens of %s kept changing while %d tries topped them up", g.subject, fillTries)
}

// gateState reads how many tokens subject holds and the sequence of the
// last (0: none).
func gateState(ctx context.Context, st jetstream.Stream, subject string) (have int, last uint64, err error) {
	msg, err := st.GetLastMsgForSubject(ctx, subject)
	switch {
	case errors.Is(err, jetstream.ErrMsgNotFound):
		return 0, 0, nil
	case err != nil:
		return 0, 0, fmt.Errorf("queue: the last token on %s: %w", subject, err)
	}
	info, err := st.Info(ctx, jetstream.WithSubjectFilter(subject))
	if err != nil {
		return 0, 0, fmt.Errorf("queue: the tokens on %s: %w", subject, err)
	}
	return int(info.State.Subjects[subject]), msg.Sequence, nil
}

// recount checks q's gates against the tokens a discovery counted on
// their subjects (by key; a subject that holds none is missing): a gate
// short of its maximum is filled, one over it retires the excess.
func (p *Puller) recount(ctx context.Context, q string, tokens map[string]int) error {
	p.gates.mu.Lock()
	var short []*gate
	for _, g := range p.gates.m {
		if g.src.name != q {
			continue
		}
		if g.counted(tokens[g.key]) {
			short = append(short, g)
		}
	}
	p.gates.mu.Unlock()
	for _, g := range short {
		if err := p.fillGate(ctx, g); err != nil {
			return err
		}
	}
	return nil
}

// takeTokens takes up to n of g's tokens without waiting (fewer when
// other tasks of the key hold the rest), retiring those over its maximum.
func (p *Puller) takeTokens(ctx context.Context, g *gate, n int) ([]jetstream.Msg, error) {
	var out []jetstream.Msg
	_, err := p.fetchRaw(ctx, g.src, n, 0, func(m jetstream.Msg) {
		if g.excess.Load() > 0 && g.excess.Add(-1) >= 0 {
			_ = m.Ack() // retired: the work-queue stream deletes it
			return
		}
		out = append(out, m)
	})
	return out, err
}

// handBack returns tokens: they may be taken at once. It returns once the
// server has them back (the last nak asks for a reply, and a consumer's
// acknowledgements are processed in order), so a pull that follows can
// take them; a token whose nak is lost returns after AckWait.
func (c *Client) handBack(tokens []jetstream.Msg) {
	if len(tokens) == 0 {
		return
	}
	last := len(tokens) - 1
	for _, t := range tokens[:last] {
		_ = t.Nak()
	}
	_, _ = c.nc.Request(tokens[last].Reply(), []byte("-NAK"), handBackTimeout)
}

// handBackTimeout bounds the wait for the server to take a token back.
const handBackTimeout = 5 * time.Second

// drained reports whether s is a key's source with a maximum (a gate)
// whose stored messages were all delivered: they run, so asking it would
// only take and hand back a token, which another source of the key, or
// another worker, may be waiting for. Other sources are never drained:
// asking them costs one no-wait pull, which says as much.
func (p *Puller) drained(ctx context.Context, s *source) (bool, error) {
	if s.gate == nil {
		return false, nil
	}
	info, err := (*s.cons.Load()).Info(ctx)
	switch {
	case errors.Is(err, jetstream.ErrConsumerNotFound):
		return false, nil // removed for inactivity: the next pull makes it again
	case err != nil:
		return false, fmt.Errorf("queue: consumer %s info: %w", s.cfg.Durable, err)
	}
	return info.NumPending == 0, nil
}

// drainedProbeEvery is how often a loop asks a drained source of a key
// with a maximum all the same.
const drainedProbeEvery = time.Second

// isGate reports whether subject is the subject of one of queue's gates.
func (s Subjects) isGate(queue, subject string) bool {
	_, ok := gateKey(strings.TrimPrefix(subject, s.Tasks(queue)+"."))
	return ok
}

// gateKey reads the key of a gate's subject from the part after the
// queue's subject and a dot; ok is false for any other subject.
func gateKey(rest string) (key string, ok bool) {
	key, ok = strings.CutPrefix(rest, gateToken+".")
	return key, ok && isToken(key)
}
