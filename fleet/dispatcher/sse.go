package dispatcher

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/agentfleet/agentfleet/fleet/api"
	"github.com/agentfleet/agentfleet/internal/identity"

	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/store"
)

// Event streams (Server-Sent Events) bridge the EVENTS stream to HTTP
// clients. Each SSE message is one event envelope:
//
//	id: <EVENTS stream sequence>
//	event: <kind>
//	data: <the envelope as JSON>
//
// A client resumes with the Last-Event-ID header (the stream continues
// after that sequence) or starts with ?from=start (the default), ?from=new
// or ?from=<sequence>. The stream of one task ends, once the task has
// finished and its events are drained (see streamEnd), with "event: end"
// whose data is {"task_id":...,"state":...}; ?follow=true keeps it open
// instead. Tree and
// fleet-wide streams stay open until the client leaves.

// sseStream describes one event stream request.
type sseStream struct {
	filter queue.EventFilter
	from   queue.StartPosition // set by stream from the request
	// done reports whether the stream may end (the task finished); nil for
	// streams that never end by themselves.
	done func(ctx context.Context) (finished, bool)
}

// finished is what a stream learns when its task has finished: the task,
// and the EVENTS sequence of its last stored event then (0: none, or it
// could not be read).
type finished struct {
	task    store.Task
	lastSeq uint64
}

func (a *handlers) taskEvents(w http.ResponseWriter, r *http.Request) {
	t, ok := a.loadTask(w, r)
	if !ok {
		return
	}
	s := sseStream{filter: queue.EventFilter{RootTaskID: t.RootID.String(), TaskID: t.ID.String()}}
	if r.URL.Query().Get("follow") != "true" {
		s.done = func(ctx context.Context) (finished, bool) { return a.taskFinished(ctx, t) }
	}
	a.stream(w, r, s)
}

// taskFinished reports whether task t has finished, with its last stored event.
func (a *handlers) taskFinished(ctx context.Context, t store.Task) (finished, bool) {
	t, err := a.reads.GetTask(ctx, store.GetTaskParams{ID: t.ID})
	if err != nil || !t.State.Terminal() {
		return finished{}, false
	}
	f := finished{task: t}
	if last, ok, err := a.events.LastEvent(ctx, t.RootID.String(), t.ID.String()); err == nil && ok {
		f.lastSeq = last.StreamSeq
	}
	return f, true
}

func (a *handlers) treeEvents(w http.ResponseWriter, r *http.Request) {
	t, ok := a.loadTask(w, r)
	if !ok {
		return
	}
	a.stream(w, r, sseStream{filter: queue.EventFilter{RootTaskID: t.RootID.String()}})
}

// allEvents streams the events of every tenant where the principal is a
// viewer: the filter names those tenants (their subjects), unless it
// views every tenant (tenantFilter's nil).
func (a *handlers) allEvents(w http.ResponseWriter, r *http.Request) {
	tenants := tenantFilter(principal(r), identity.Viewer, "")
	if tenants != nil && len(tenants) == 0 { // routeAccess lets no such principal in; an empty EventFilter is every tenant
		writeErr(w, http.StatusForbidden, api.ErrorDetail{Code: api.CodeForbidden, Message: "streaming events needs the viewer role in some tenant"})
		return
	}
	a.stream(w, r, sseStream{filter: queue.EventFilter{Tenants: tenants}})
}

// startPosition reads Last-Event-ID or ?from=. It writes a 400 and returns
// false when either is malformed.
func startPosition(w http.ResponseWriter, r *http.Request) (queue.StartPosition, bool) {
	if v := r.Header.Get("Last-Event-ID"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			badRequestf(w, "Last-Event-ID", "%q is not an event id (a stream sequence number)", v)
			return queue.StartPosition{}, false
		}
		return queue.FromSeq(n + 1), true
	}
	switch v := r.URL.Query().Get("from"); v {
	case "", "start":
		return queue.FromStart(), true
	case "new":
		return queue.NewOnly(), true
	default:
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil || n == 0 {
			badRequestf(w, "from", "must be start, new or a stream sequence >= 1, got %q", v)
			return queue.StartPosition{}, false
		}
		return queue.FromSeq(n), true
	}
}

// stream writes the events of s until the client leaves or s is done.
func (a *handlers) stream(w http.ResponseWriter, r *http.Request, s sseStream) {
	from, ok := startPosition(w, r)
	if !ok {
		return
	}
	s.from = from
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	sub, err := a.events.SubscribeEvents(ctx, s.filter, from)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	events, stopped := relay(ctx, sub)
	defer func() { cancel(); sub.Stop(); <-stopped }()

	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Time{}) // a stream outlives the server's write timeout
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	fmt.Fprint(w, "retry: 2000\n\n")
	if rc.Flush() != nil {
		return
	}
	a.metrics.streams.Inc()
	defer a.metrics.streams.Dec()
	a.pump(ctx, w, rc, s, events)
}

// pump is the write loop of a stream: events, heartbeats and the end.
func (a *handlers) pump(ctx context.Context, w http.ResponseWriter, rc *http.ResponseController, s sseStream, events <-chan queue.ReceivedEvent) {
	heartbeat := time.NewTicker(a.opts.SSEHeartbeat)
	defer heartbeat.Stop()
	poll := time.NewTicker(a.opts.SSEDonePoll)
	defer poll.Stop()
	end := streamEnd{idle: a.opts.SSEDrainIdle}
	defer end.stop()
	checkDone := func() {
		if s.done == nil || end.known {
			return
		}
		if f, done := s.done(ctx); done {
			end.finished(f, s.from)
		}
	}
	checkDone()
	for {
		var err error
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-events:
			if !ok {
				return
			}
			err = writeEvent(w, ev)
			a.metrics.eventsSent.Inc()
			end.wrote(ev.StreamSeq)
			if err == nil && len(events) > 0 {
				continue // more are ready: one flush for the lot
			}
		case <-heartbeat.C:
			_, err = fmt.Fprint(w, ": keep-alive\n\n")
		case <-poll.C:
			checkDone()
			continue
		case <-end.drained():
			t := end.task
			data, _ := json.Marshal(api.StreamEnd{TaskID: t.ID, State: t.State, Error: t.Error})
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", api.EndEvent, data)
			_ = rc.Flush()
			return
		}
		if err != nil || rc.Flush() != nil {
			return
		}
	}
}

// streamEnd decides when the stream of a finished task ends: once it has
// written the last event stored when the task was found finished (when its
// start position replays it), and then no event came for idle. The idle
// wait covers the events a worker publishes just after writing the task's
// end, such as SESSION_END.
type streamEnd struct {
	idle    time.Duration
	known   bool       // the task has finished
	task    store.Task // as found finished
	endAt   uint64     // the stream sequence to reach before idling out
	written uint64     // the stream sequence of the last event written
	timer   *time.Timer
}

func (e *streamEnd) finished(f finished, from queue.StartPosition) {
	e.known, e.task = true, f.task
	if from.Replays(f.lastSeq) {
		e.endAt = f.lastSeq
	}
	e.arm()
}

func (e *streamEnd) wrote(seq uint64) {
	e.written = seq
	if e.timer != nil {
		e.timer.Reset(e.idle)
		return
	}
	e.arm()
}

// arm starts the idle timer once the task has finished and its stored
// events are written.
func (e *streamEnd) arm() {
	if e.known && e.timer == nil && e.written >= e.endAt {
		e.timer = time.NewTimer(e.idle)
	}
}

// drained fires when the stream may end; nil (never) before arm.
func (e *streamEnd) drained() <-chan time.Time {
	if e.timer == nil {
		return nil
	}
	return e.timer.C
}

func (e *streamEnd) stop() {
	if e.timer != nil {
		e.timer.Stop()
	}
}

// relayBuffer is how many events relay reads ahead of the writer. Under load
// the writer then finds several ready and flushes once for them all; when
// events trickle in, each is flushed at once.
const relayBuffer = 64

// relay reads sub on a goroutine of its own and hands the events over until
// ctx ends or the subscription fails. stopped is closed when it has exited.
func relay(ctx context.Context, sub *queue.EventSubscription) (events <-chan queue.ReceivedEvent, stopped <-chan struct{}) {
	ch := make(chan queue.ReceivedEvent, relayBuffer)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(ch)
		for {
			ev, err := sub.NextRaw(ctx) // passed on as stored: writeEvent
			if errors.Is(err, queue.ErrBadEvent) {
				continue // not an envelope: nothing a client could read
			}
			if err != nil {
				return
			}
			select {
			case ch <- ev:
			case <-ctx.Done():
				return
			}
		}
	}()
	return ch, done
}

// writeEvent writes ev as one SSE event whose data is the event's JSON as
// stored (ev.Raw), compacted onto one line if it is not on one already, or
// ev.Event encoded when there is no Raw.
func writeEvent(w io.Writer, ev queue.ReceivedEvent) error {
	data := ev.Raw
	if len(data) == 0 {
		var err error
		if data, err = json.Marshal(ev.Event); err != nil {
			return err
		}
	}
	b := make([]byte, 0, len(data)+len(ev.Kind)+48)
	b = append(b, "id: "...)
	b = strconv.AppendUint(b, ev.StreamSeq, 10)
	b = append(b, "\nevent: "...)
	b = append(b, ev.Kind...)
	b = append(b, "\ndata: "...)
	if bytes.ContainsAny(data, "\r\n") {
		buf := bytes.NewBuffer(b)
		if err := json.Compact(buf, data); err != nil {
			return err
		}
		b = buf.Bytes()
	} else {
		b = append(b, data...)
	}
	b = append(b, "\n\n"...)
	_, err := w.Write(b)
	return err
}
