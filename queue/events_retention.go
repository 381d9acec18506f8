package queue

import (
	"context"
	"fmt"
	"strings"

	"github.com/nats-io/nats.go/jetstream"
)

// EventTrees lists the trees that have events in EVENTS, by tenant: for
// each tenant, each root task id with the number of events stored. Events
// on the subjects from before tenants (<prefix>.events.<root>.<task>.<kind>)
// are left out; the stream's max age ends them. It reads the stream's
// per-subject counts in one request (paged by the server), so its cost
// grows with the number of distinct subjects (tasks × event kinds).
func (c *Client) EventTrees(ctx context.Context) (map[string]map[string]uint64, error) {
	s, err := c.js.Stream(ctx, c.cfg.EventsStream)
	if err != nil {
		return nil, fmt.Errorf("queue: stream %s: %w", c.cfg.EventsStream, err)
	}
	info, err := s.Info(ctx, jetstream.WithSubjectFilter(c.subj.AllEvents()))
	if err != nil {
		return nil, fmt.Errorf("queue: subjects of %s: %w", c.cfg.EventsStream, err)
	}
	head := strings.TrimSuffix(c.subj.AllEvents(), ">")
	out := map[string]map[string]uint64{}
	for subj, n := range info.State.Subjects {
		tok := strings.Split(strings.TrimPrefix(subj, head), ".")
		if len(tok) != 4 { // tenant, root, task, kind
			continue
		}
		if out[tok[0]] == nil {
			out[tok[0]] = map[string]uint64{}
		}
		out[tok[0]][tok[1]] += n
	}
	return out, nil
}

// PurgeTreeEvents deletes every event of one tree of tenant from EVENTS
// (a purge by the subject filter <prefix>.events.<tenant>.<root>.>).
func (c *Client) PurgeTreeEvents(ctx context.Context, tenant, root string) error {
	if err := CheckTenant(tenant); err != nil {
		return err
	}
	if err := checkToken("root", root); err != nil {
		return err
	}
	s, err := c.js.Stream(ctx, c.cfg.EventsStream)
	if err != nil {
		return fmt.Errorf("queue: stream %s: %w", c.cfg.EventsStream, err)
	}
	if err := s.Purge(ctx, jetstream.WithPurgeSubject(c.subj.Event(tenant, root, "*", "*"))); err != nil {
		return fmt.Errorf("queue: purging the events of tree %s of tenant %s: %w", root, tenant, err)
	}
	return nil
}
