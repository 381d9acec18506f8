package client

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/fleet/api"
	"github.com/agentfleet/agentfleet/queue"
)

// StreamOptions say where an event stream starts and whether it ends.
type StreamOptions struct {
	// AfterSeq resumes after this EVENTS sequence (sent as Last-Event-ID);
	// 0 starts at From.
	AfterSeq uint64
	// From is "start" (the default), "new" or a stream sequence.
	From string
	// Follow keeps a finished task's stream open.
	Follow bool
	// Tree streams the whole tree of the task's root instead of the task.
	Tree bool
}

// StreamedEvent is one message of an event stream: an event with its
// stream sequence, or the end of a finished task's stream (End set).
type StreamedEvent struct {
	Seq   uint64
	Event queue.Event
	End   *api.StreamEnd
}

// EventStream reads Server-Sent Events. Next is for one goroutine; Close
// may be called from any.
type EventStream struct {
	body io.ReadCloser
	r    *bufio.Reader
}

// Events opens the event stream of a task (or of its tree).
func (c *Client) Events(ctx context.Context, id uuid.UUID, o StreamOptions) (*EventStream, error) {
	path := "/v1/tasks/" + id.String() + "/events"
	if o.Tree {
		path = "/v1/tasks/" + id.String() + "/tree/events"
	}
	return c.openStream(ctx, path, o)
}

// AllEvents opens the stream of every event of the fleet.
func (c *Client) AllEvents(ctx context.Context, o StreamOptions) (*EventStream, error) {
	return c.openStream(ctx, "/v1/events", o)
}

func (c *Client) openStream(ctx context.Context, path string, o StreamOptions) (*EventStream, error) {
	q := url.Values{}
	if o.From != "" {
		q.Set("from", o.From)
	}
	if o.Follow {
		q.Set("follow", "true")
	}
	hdr := http.Header{"Accept": {"text/event-stream"}}
	if o.AfterSeq > 0 {
		hdr.Set("Last-Event-ID", strconv.FormatUint(o.AfterSeq, 10))
	}
	resp, err := c.send(ctx, http.MethodGet, path, q, nil, hdr) //nolint:bodyclose // EventStream.Close closes it
	if err != nil {
		return nil, err
	}
	return &EventStream{body: resp.Body, r: bufio.NewReaderSize(resp.Body, 64<<10)}, nil
}

// Next returns the next event. It returns io.EOF after the end message of a
// finished task has been returned and the server closed the stream, or
// when the stream is closed.
func (s *EventStream) Next() (StreamedEvent, error) {
	var id, event string
	var data []byte
	for {
		line, err := s.r.ReadBytes('\n')
		if err != nil {
			if errors.Is(err, io.ErrUnexpectedEOF) {
				err = io.EOF
			}
			return StreamedEvent{}, err
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 {
			if data == nil {
				continue // a comment or retry block
			}
			return decodeStreamed(id, event, data)
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "id":
			id = string(value)
		case "event":
			event = string(value)
		case "data":
			if data != nil {
				data = append(data, '\n')
			}
			data = append(data, value...)
		}
	}
}

func decodeStreamed(id, event string, data []byte) (StreamedEvent, error) {
	if event == api.EndEvent {
		var end api.StreamEnd
		if err := json.Unmarshal(data, &end); err != nil {
			return StreamedEvent{}, fmt.Errorf("dispatcher: end of stream: %w", err)
		}
		return StreamedEvent{End: &end}, nil
	}
	var se StreamedEvent
	if id != "" {
		n, err := strconv.ParseUint(id, 10, 64)
		if err != nil {
			return se, fmt.Errorf("dispatcher: event id %q is not a sequence", id)
		}
		se.Seq = n
	}
	if err := json.Unmarshal(data, &se.Event); err != nil {
		return se, fmt.Errorf("dispatcher: event %s: %w", id, err)
	}
	return se, nil
}

// Close ends the stream.
func (s *EventStream) Close() error { return s.body.Close() }
