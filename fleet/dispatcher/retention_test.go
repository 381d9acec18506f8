package dispatcher

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/store"
)

// withHistory gives task id a session with n turns.
func withHistory(t *testing.T, st store.Store, id uuid.UUID, n int) uuid.UUID {
	t.Helper()
	turns := make([]store.NewTurn, n)
	for i := range turns {
		turns[i] = store.NewTurn{Seq: int64(i + 1), Kind: "assistant", Payload: json.RawMessage(`{"text":"x"}`)}
	}
	sid := uuid.New()
	if _, err := st.AppendTurns(context.Background(), store.AppendTurnsParams{SessionID: sid, Turns: turns,
		CreateSession: &store.CreateSessionParams{ID: sid, TaskID: id}}); err != nil {
		t.Fatal(err)
	}
	return sid
}

func turnsOf(t *testing.T, st store.Store, sid uuid.UUID) int {
	t.Helper()
	turns, err := st.LoadTurns(context.Background(), store.LoadTurnsParams{SessionID: sid})
	if err != nil {
		t.Fatal(err)
	}
	return len(turns)
}

// TestRetentionSweep: the sweeper deletes the turns of ended trees past
// their tenant's window in batches, keeps a live tree's and a tenant's
// that keeps for ever, and counts the rows in its metric.
func TestRetentionSweep(t *testing.T) {
	bothStores(t, func(t *testing.T, mk storeMaker) {
		b := setupAPIWith(t, mk, func(c *Config) {
			c.Retention = Retention{Default: RetentionPolicy{Turns: 24 * time.Hour, Artifacts: 24 * time.Hour},
				Tenants: map[string]RetentionPolicy{"forever": {Turns: -1}}, Batch: 2, Interval: time.Hour}
		})
		ctx := context.Background()
		submit := func(tenant string) store.Task {
			s := validSpec("x")
			s.Tenant = tenant
			sub, err := b.d.Submit(ctx, []fleet.TaskSpec{s})
			if err != nil {
				t.Fatal(err)
			}
			return sub[0].Task
		}
		end := func(id uuid.UUID) {
			if _, err := b.st.TransitionTask(ctx, store.TransitionTaskParams{ID: id, From: store.TaskQueued, To: store.TaskFailed}); err != nil {
				t.Fatal(err)
			}
		}
		ended := submit("team")
		endedSess := withHistory(t, b.st, ended.ID, 5)
		end(ended.ID)
		kept := submit("forever")
		keptSess := withHistory(t, b.st, kept.ID, 2)
		end(kept.ID)
		live := submit("team")
		child, err := b.st.CreateTask(ctx, store.CreateTaskParams{ParentID: live.ID, Spec: live.Spec})
		if err != nil {
			t.Fatal(err)
		}
		childSess := withHistory(t, b.st, child.Task.ID, 3)
		end(child.Task.ID)

		// Within the window: nothing goes.
		if err := b.d.sweep.sweep(ctx, time.Now()); err != nil {
			t.Fatal(err)
		}
		if got := turnsOf(t, b.st, endedSess); got != 5 {
			t.Fatalf("within the window the ended task has %d turns, want 5", got)
		}
		// A day and more later.
		if err := b.d.sweep.sweep(ctx, time.Now().Add(25*time.Hour)); err != nil {
			t.Fatal(err)
		}
		if got := turnsOf(t, b.st, endedSess); got != 0 {
			t.Fatalf("past the window the ended task has %d turns, want 0", got)
		}
		if got := turnsOf(t, b.st, childSess); got != 3 {
			t.Fatalf("the ended child of a live tree has %d turns, want its 3", got)
		}
		if got := turnsOf(t, b.st, keptSess); got != 2 {
			t.Fatalf("the tenant that keeps for ever has %d turns, want its 2", got)
		}
		view, err := b.client.Retention(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if view.Deleted["turns"] != 5 || view.Default.Turns != fleet.Duration(24*time.Hour) || view.Tenants["forever"].Artifacts != fleet.Duration(24*time.Hour) {
			t.Fatalf("GET /v1/retention: %+v, want 5 turns deleted and the policies", view)
		}
		_, _, raw := b.rawCall(t, "GET", "/metrics", nil, "")
		metrics := string(raw)
		if !strings.Contains(metrics, `agentfleet_retention_rows_deleted_total{kind="turns"} 5`) {
			t.Fatalf("the metric does not count the 5 turns:\n%s", grepLines(metrics, "retention"))
		}
	})
}

func TestRetentionValidate(t *testing.T) {
	err := Config{Retention: Retention{Default: RetentionPolicy{Turns: time.Minute},
		Tenants: map[string]RetentionPolicy{"a": {Artifacts: time.Second}}}}.WithDefaults().Validate()
	if err == nil || !strings.Contains(err.Error(), "retention.default.turns") || !strings.Contains(err.Error(), "retention.tenants.a.artifacts") {
		t.Fatalf("windows under the floor: %v, want both named", err)
	}
	if err := (Config{Retention: Retention{Default: RetentionPolicy{Turns: 2 * time.Hour, ToolOutputs: -1}}}).WithDefaults().Validate(); err != nil {
		t.Fatalf("a valid policy: %v", err)
	}
}

func grepLines(s, sub string) string {
	var out []string
	for l := range strings.SplitSeq(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
