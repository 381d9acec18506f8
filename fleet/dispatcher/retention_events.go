package dispatcher

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/store"
)

// eventsKind is the metric label of events purged by retention.
const eventsKind store.RetentionKind = "events"

// eventTrees is what the events sweep needs of the queue
// (*queue.Client).
type eventTrees interface {
	EventTrees(ctx context.Context) (map[string]map[string]uint64, error)
	PurgeTreeEvents(ctx context.Context, tenant, root string) error
}

// sweepEvents purges from EVENTS the events of every tree whose tenant
// has an Events window, whose root ended more than that window before
// now, and which holds no live task (the floor). It looks at no more
// than Retention.Batch trees a sweep, going on from where the last one
// stopped (s.cursor), so a sweep is a bounded number of store reads and
// purges however many trees EVENTS holds. A tree whose root is not in
// the store is left to the stream's max age.
func (s *sweeper) sweepEvents(ctx context.Context, now time.Time) error {
	if s.events == nil || !s.eventsEnabled() {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	trees, err := s.events.EventTrees(ctx)
	if err != nil {
		return err
	}
	type tree struct {
		tenant, root string
		n            uint64
	}
	var all []tree
	for tenant, roots := range trees {
		if s.policy(tenant).Events <= 0 {
			continue
		}
		for root, n := range roots {
			all = append(all, tree{tenant, root, n})
		}
	}
	slices.SortFunc(all, func(a, b tree) int { return strings.Compare(a.tenant+"/"+a.root, b.tenant+"/"+b.root) })
	start, _ := slices.BinarySearchFunc(all, s.cursor, func(t tree, c string) int {
		return strings.Compare(t.tenant+"/"+t.root, c+"\x00") // the first after the cursor
	})
	var errs []error
	for i := range min(len(all), s.cfg.Batch) {
		t := all[(start+i)%len(all)]
		s.cursor = t.tenant + "/" + t.root
		gone, err := s.treeGone(ctx, t.tenant, t.root, now.Add(-s.policy(t.tenant).Events))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !gone {
			continue
		}
		if err := s.events.PurgeTreeEvents(ctx, t.tenant, t.root); err != nil {
			errs = append(errs, err)
			continue
		}
		s.deleted.WithLabelValues(string(eventsKind)).Add(float64(t.n))
	}
	return errors.Join(errs...)
}

// treeGone reports whether the tree of root, in tenant, ended before
// cutoff with no live task left.
func (s *sweeper) treeGone(ctx context.Context, tenant, root string, cutoff time.Time) (bool, error) {
	id, perr := uuid.Parse(root)
	if perr != nil {
		return false, nil //nolint:nilerr // not a task id: the stream's max age ends it
	}
	r, err := s.tasks.GetTask(ctx, store.GetTaskParams{ID: id})
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("retention of events: tree %s: %w", root, err)
	}
	if fleet.SessionTenant(r) != tenant || !r.State.Terminal() || r.FinishedAt.IsZero() || !r.FinishedAt.Before(cutoff) {
		return false, nil
	}
	live, err := s.tasks.ListTasks(ctx, store.ListTasksParams{RootID: id, Limit: 1,
		States: []store.TaskState{store.TaskQueued, store.TaskRunning, store.TaskWaiting}})
	if err != nil {
		return false, fmt.Errorf("retention of events: tree %s: %w", root, err)
	}
	return len(live.Tasks) == 0, nil
}

// policy is tenant's policy, its zero fields from the default.
func (s *sweeper) policy(tenant string) RetentionPolicy {
	if p, ok := s.cfg.Tenants[tenant]; ok {
		return p.over(s.cfg.Default)
	}
	return s.cfg.Default
}

func (s *sweeper) eventsEnabled() bool {
	return s.anyPolicy(func(p RetentionPolicy) bool { return p.Events > 0 })
}

// eventsView says how events are kept, for GET /v1/retention, naming the
// windows of the tenants the caller sees (nil: every tenant).
func (s *sweeper) eventsView(tenants []string) string {
	say := func(d time.Duration) string {
		if d <= 0 {
			return "the EVENTS stream's max age"
		}
		return d.String() + " after the tree's root ended (and no task of the tree is live)"
	}
	parts := []string{"default: " + say(s.cfg.Default.Events)}
	for _, t := range slices.Sorted(maps.Keys(s.cfg.Tenants)) {
		if tenants == nil || slices.Contains(tenants, t) {
			parts = append(parts, t+": "+say(s.policy(t).Events))
		}
	}
	return strings.Join(parts, "; ") + "; never longer than the EVENTS stream's max age (the queue configuration)"
}
