package redteam

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/client"
	"github.com/agentfleet/agentfleet/store"
)

// record is what the fleet stored and published of a task's tree: every
// string of its events and of its sessions' turns, and each task's end.
type record struct {
	root   uuid.UUID
	states map[uuid.UUID]store.TaskState
	errs   []string // the tasks' errors
	texts  []string // every string value of every event and turn
}

// has reports whether s occurs in any stored or published text, and
// where (false on a nil record: a task refused at submission).
func (r *record) has(s string) (string, bool) {
	if r == nil {
		return "", false
	}
	for _, t := range r.texts {
		if i := strings.Index(t, s); i >= 0 {
			return excerpt(t, i, len(s)), true
		}
	}
	return "", false
}

// excerpt is up to 40 characters either side of t[i:i+n], on one line.
func excerpt(t string, i, n int) string {
	lo, hi := max(0, i-40), min(len(t), i+n+40)
	return strings.Join(strings.Fields(t[lo:hi]), " ")
}

// state is the root task's final state.
func (r *record) state() store.TaskState { return r.states[r.root] }

// submit submits spec; a refusal (400) is returned as refused, not err.
func submit(ctx context.Context, c *client.Client, spec fleet.TaskSpec) (id uuid.UUID, refused string, err error) {
	resp, err := c.Submit(ctx, spec)
	var apiErr *client.APIError
	if errors.As(err, &apiErr) && apiErr.Status/100 == 4 {
		return uuid.Nil, fmt.Sprintf("refused at submission (%d): %s", apiErr.Status, oneLine(apiErr.Error())), nil
	}
	if err != nil {
		return uuid.Nil, "", err
	}
	return resp.Task.ID, "", nil
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 160 {
		s = s[:160] + "..."
	}
	return s
}

// waitRecord waits until the task whose id is given and every task of
// its tree have finished (on their event streams, bounded by ctx), then
// reads what was stored of them.
func waitRecord(ctx context.Context, c *client.Client, root uuid.UUID) (*record, error) {
	r := &record{root: root, states: map[uuid.UUID]store.TaskState{}}
	if err := r.readEvents(ctx, c, root); err != nil {
		return nil, err
	}
	tree, err := c.Tree(ctx, root)
	if err != nil {
		return nil, err
	}
	for _, t := range tree.Tasks {
		if t.ID != root {
			if err := r.readEvents(ctx, c, t.ID); err != nil {
				return nil, err
			}
		}
		if err := r.readTurns(ctx, c, t.ID); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// readEvents reads a task's event stream to its end (the task finished).
func (r *record) readEvents(ctx context.Context, c *client.Client, id uuid.UUID) error {
	s, err := c.Events(ctx, id, client.StreamOptions{})
	if err != nil {
		return err
	}
	defer func() { _ = s.Close() }()
	stop := context.AfterFunc(ctx, func() { _ = s.Close() })
	defer stop()
	for {
		ev, err := s.Next()
		if err != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("task %s did not finish in time (%s)", id, r.lastSeen(c, id))
			}
			return fmt.Errorf("reading the events of task %s: %w", id, err)
		}
		if ev.End != nil {
			r.states[id] = ev.End.State
			if ev.End.Error != "" {
				r.errs = append(r.errs, ev.End.Error)
			}
			return nil
		}
		b, _ := json.Marshal(ev.Event)
		r.addJSON(b)
	}
}

// readTurns reads every turn of every session of a task.
func (r *record) readTurns(ctx context.Context, c *client.Client, id uuid.UUID) error {
	ss, err := c.Sessions(ctx, id)
	if err != nil {
		return err
	}
	for _, s := range ss.Sessions {
		var after int64
		for {
			tl, err := c.Turns(ctx, s.ID, after)
			if err != nil {
				return err
			}
			for _, t := range tl.Turns {
				r.addJSON(t.Payload)
			}
			if tl.NextAfter == 0 {
				break
			}
			after = tl.NextAfter
		}
	}
	return nil
}

// addJSON adds every string of a JSON document (decoded, so that a tab
// is a tab), or the document itself when it is not JSON.
func (r *record) addJSON(b []byte) {
	var v any
	if json.Unmarshal(b, &v) != nil {
		r.texts = append(r.texts, string(b))
		return
	}
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			r.texts = append(r.texts, v)
			// A string holding JSON (a tool call's arguments) is walked too.
			if strings.HasPrefix(strings.TrimSpace(v), "{") {
				var inner any
				if json.Unmarshal([]byte(v), &inner) == nil {
					walk(inner)
				}
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		case map[string]any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(v)
}

// lastSeen says what a task is doing, for an error: its state, and the
// last text it published.
func (r *record) lastSeen(c *client.Client, id uuid.UUID) string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	state := "state unknown"
	if t, err := c.Get(ctx, id); err == nil {
		state = "state " + string(t.State)
	}
	if n := len(r.texts); n > 0 {
		return state + ", last published: " + oneLine(r.texts[n-1])
	}
	return state + ", nothing published"
}
