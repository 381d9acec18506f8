package queue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
)

// LastEvent returns the last event stored for a task (any kind), so that a
// session resumed on another worker continues its gapless Seq. ok is false
// when EVENTS holds no event of the task.
func (c *Client) LastEvent(ctx context.Context, rootTaskID, taskID string) (ev Event, ok bool, err error) {
	if err := checkToken("root task id", rootTaskID); err != nil {
		return Event{}, false, err
	}
	if err := checkToken("task id", taskID); err != nil {
		return Event{}, false, err
	}
	s, err := c.js.Stream(ctx, c.cfg.EventsStream)
	if err != nil {
		return Event{}, false, fmt.Errorf("queue: stream %s: %w", c.cfg.EventsStream, err)
	}
	raw, err := s.GetLastMsgForSubject(ctx, c.subj.Event(rootTaskID, taskID, "*"))
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return Event{}, false, nil
	}
	if err != nil {
		return Event{}, false, fmt.Errorf("queue: last event of task %s: %w", taskID, err)
	}
	if err := json.Unmarshal(raw.Data, &ev); err != nil {
		return Event{}, false, fmt.Errorf("%w at stream seq %d: %v", ErrBadEvent, raw.Sequence, err)
	}
	return ev, true, nil
}
