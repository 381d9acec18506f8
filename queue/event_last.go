package queue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
)

// LastEvent returns the last event stored for a task (any kind), with its
// place in EVENTS: a session resumed on another worker continues its
// gapless Seq, and a stream of a finished task knows when it has replayed
// everything. ok is false when EVENTS holds no event of the task.
func (c *Client) LastEvent(ctx context.Context, rootTaskID, taskID string) (ev ReceivedEvent, ok bool, err error) {
	if err := checkToken("root task id", rootTaskID); err != nil {
		return ReceivedEvent{}, false, err
	}
	if err := checkToken("task id", taskID); err != nil {
		return ReceivedEvent{}, false, err
	}
	s, err := c.js.Stream(ctx, c.cfg.EventsStream)
	if err != nil {
		return ReceivedEvent{}, false, fmt.Errorf("queue: stream %s: %w", c.cfg.EventsStream, err)
	}
	raw, err := s.GetLastMsgForSubject(ctx, c.subj.Event(rootTaskID, taskID, "*"))
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return ReceivedEvent{}, false, nil
	}
	if err != nil {
		return ReceivedEvent{}, false, fmt.Errorf("queue: last event of task %s: %w", taskID, err)
	}
	if err := json.Unmarshal(raw.Data, &ev.Event); err != nil {
		return ReceivedEvent{}, false, fmt.Errorf("%w at stream seq %d: %v", ErrBadEvent, raw.Sequence, err)
	}
	ev.StreamSeq, ev.Subject = raw.Sequence, raw.Subject
	return ev, true, nil
}
