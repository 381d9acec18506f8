package dispatcher

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/store"
)

// TestRetentionEvents: a tenant's events window purges from EVENTS the
// events of trees whose root ended longer ago, a bounded number of trees
// a sweep; a tree with a live task, a tree still within its window and a
// tenant that keeps events for ever keep theirs; the metric and GET
// /v1/retention count the purged events.
func TestRetentionEvents(t *testing.T) {
	bothStores(t, func(t *testing.T, mk storeMaker) {
		b := setupAPIWith(t, mk, func(c *Config) {
			c.Retention = Retention{Default: RetentionPolicy{Events: 24 * time.Hour},
				Tenants: map[string]RetentionPolicy{"forever": {Events: -1}}, Batch: 1, Interval: time.Hour}
		})
		ctx := context.Background()
		events := func(tenant string, root uuid.UUID) int {
			t.Helper()
			s, err := b.js.Stream(ctx, b.q.Config().EventsStream)
			if err != nil {
				t.Fatal(err)
			}
			info, err := s.Info(ctx, jetstream.WithSubjectFilter(b.q.Subjects().Event(tenant, root.String(), "*", "*")))
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, c := range info.State.Subjects {
				n += int(c)
			}
			return n
		}
		// tree submits a root with a child in tenant, two events each, and
		// ends both unless live.
		tree := func(tenant string, live bool) uuid.UUID {
			t.Helper()
			s := validSpec("x")
			s.Tenant = tenant
			sub, err := b.d.Submit(ctx, []fleet.TaskSpec{s})
			if err != nil {
				t.Fatal(err)
			}
			root := sub[0].Task
			child, err := b.st.CreateTask(ctx, store.CreateTaskParams{ParentID: root.ID, Spec: root.Spec})
			if err != nil {
				t.Fatal(err)
			}
			for _, id := range []uuid.UUID{child.Task.ID, root.ID} {
				for _, kind := range []string{"started", "ended"} {
					if _, err := b.js.Publish(ctx, b.q.Subjects().Event(tenant, root.ID.String(), id.String(), kind), []byte(`{}`)); err != nil {
						t.Fatal(err)
					}
				}
				if live && id == root.ID {
					continue
				}
				if _, err := b.st.TransitionTask(ctx, store.TransitionTaskParams{ID: id, From: store.TaskQueued, To: store.TaskFailed}); err != nil {
					t.Fatal(err)
				}
			}
			return root.ID
		}
		ended1, ended2 := tree("team", false), tree("team", false)
		live := tree("team", true)
		kept := tree("forever", false)

		if err := b.d.sweep.sweep(ctx, time.Now()); err != nil {
			t.Fatal(err)
		}
		for _, r := range []uuid.UUID{ended1, ended2, live} {
			if n := events("team", r); n != 4 {
				t.Fatalf("within the window tree %s has %d events, want 4", r, n)
			}
		}
		later := time.Now().Add(25 * time.Hour)
		if err := b.d.sweep.sweep(ctx, later); err != nil {
			t.Fatal(err)
		}
		if gone := boolInt(events("team", ended1) == 0) + boolInt(events("team", ended2) == 0); gone > 1 {
			t.Fatalf("one sweep with batch 1 purged %d trees, want at most 1", gone)
		}
		for range 3 { // the cursor goes round the three trees of team
			if err := b.d.sweep.sweep(ctx, later); err != nil {
				t.Fatal(err)
			}
		}
		if n1, n2 := events("team", ended1), events("team", ended2); n1 != 0 || n2 != 0 {
			t.Fatalf("ended trees past the window keep %d and %d events, want 0", n1, n2)
		}
		if n := events("team", live); n != 4 {
			t.Fatalf("the tree with a live root has %d events, want its 4 (its ended child's too)", n)
		}
		if n := events("forever", kept); n != 4 {
			t.Fatalf("the tenant that keeps events for ever has %d, want 4", n)
		}
		view, err := b.client.Retention(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if view.Deleted["events"] != 8 || !strings.Contains(view.Events, "forever: the EVENTS stream's max age") ||
			!strings.Contains(view.Events, "default: 24h0m0s after the tree's root ended") {
			t.Fatalf("GET /v1/retention: %+v, want 8 events deleted and the windows", view)
		}
		_, _, raw := b.rawCall(t, "GET", "/metrics", nil, "")
		if !strings.Contains(string(raw), `agentfleet_retention_rows_deleted_total{kind="events"} 8`) {
			t.Fatalf("the metric does not count the 8 events:\n%s", grepLines(string(raw), "retention"))
		}
	})
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
