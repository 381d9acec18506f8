package dispatcher

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/api"
	"github.com/agentfleet/agentfleet/fleet/client"
	"github.com/agentfleet/agentfleet/store"
)

// endTask creates a root task with labels, gives it a session costing
// cost and ends it in state to with res as its result.
func endTask(t *testing.T, st store.Store, labels map[string]string, cost float64, to store.TaskState, reason string, res fleet.TaskResult) store.Task {
	t.Helper()
	ctx := context.Background()
	created, err := st.CreateTask(ctx, store.CreateTaskParams{Spec: json.RawMessage(`{"prompt":"fix it","profile":"sim"}`), Labels: labels})
	if err != nil {
		t.Fatal(err)
	}
	id := created.Task.ID
	if _, err := st.ClaimTask(ctx, store.ClaimTaskParams{ID: id, WorkerID: "w"}); err != nil {
		t.Fatal(err)
	}
	s, err := st.CreateSession(ctx, store.CreateSessionParams{TaskID: id, Profile: "sim", Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.UpdateSession(ctx, store.UpdateSessionParams{ID: s.ID, AddCostUSD: cost,
		AddUsage: store.Usage{InputTokens: 100, OutputTokens: 20}}); err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	task, err := st.TransitionTask(ctx, store.TransitionTaskParams{ID: id, From: store.TaskRunning, To: to, Result: raw, Error: reason})
	if err != nil {
		t.Fatal(err)
	}
	return task
}

func TestReports(t *testing.T) {
	bothStores(t, func(t *testing.T, mk storeMaker) {
		b := setupAPI(t, mk)
		ctx := context.Background()
		a := map[string]string{"backlog": "q3", "model": "a"}
		fixed := fleet.TaskResult{Success: true, FinalText: "done", TurnsUsed: 3,
			Checks:   &fleet.CheckReport{Verdict: fleet.VerdictFixed},
			Delivery: &fleet.DeliveryResult{RequestURL: "https://forge.example/pr/7"}}
		first := endTask(t, b.st, a, 0.5, store.TaskSucceeded, "", fixed)
		if _, err := b.st.PutArtifact(ctx, store.PutArtifactParams{TaskID: first.ID, Kind: "diff",
			ContentType: "text/x-diff", Content: []byte("--- a/x\n+++ b/x\n")}); err != nil {
			t.Fatal(err)
		}
		endTask(t, b.st, a, 0.25, store.TaskFailed, fleet.ReasonTurnLimit, fleet.TaskResult{TurnsUsed: 9})
		for range 3 {
			endTask(t, b.st, map[string]string{"backlog": "q3", "model": "b"}, 0.1, store.TaskSucceeded, "", fleet.TaskResult{Success: true, TurnsUsed: 1})
		}
		if _, err := b.st.CreateTask(ctx, store.CreateTaskParams{Spec: json.RawMessage(`{}`), Labels: a}); err != nil {
			t.Fatal(err)
		}

		rs, err := b.client.Reports(ctx, client.ReportQuery{Labels: a, Compare: map[string]string{"model": "b"}})
		if err != nil {
			t.Fatal(err)
		}
		r := rs.Report
		if r.Tasks != 3 || r.Now != (api.ReportCounts{Queued: 1, Succeeded: 1, Failed: 1}) || r.Finished != 2 || r.SuccessRate != 0.5 {
			t.Fatalf("model a: %+v", r)
		}
		if r.CostUSD != 0.75 || r.CostPerSuccessUSD != 0.75 || r.MedianTurns != 6 || r.TokensPerSuccess != 240 {
			t.Fatalf("model a cost %v, per success %v, median turns %v, tokens per success %v", r.CostUSD, r.CostPerSuccessUSD, r.MedianTurns, r.TokensPerSuccess)
		}
		if len(r.TopFailures) != 1 || r.TopFailures[0].Reason != fleet.ReasonTurnLimit || len(r.Outcomes) != 2 || r.Outcomes[0].Detail != fleet.VerdictFixed {
			t.Fatalf("model a outcomes %+v, failures %+v", r.Outcomes, r.TopFailures)
		}
		c := rs.Compare
		if c == nil || c.Tasks != 3 || c.SuccessRate != 1 || c.Filter["model"] != "b" || c.Filter["backlog"] != "q3" || c.SuccessInterval[1] != 1 {
			t.Fatalf("model b: %+v", c)
		}

		body, err := b.client.ReportExport(ctx, client.ReportQuery{Labels: a})
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = body.Close() }()
		var recs []api.ExportRecord
		sc := bufio.NewScanner(body)
		for sc.Scan() {
			var rec api.ExportRecord
			if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
				t.Fatalf("line %q: %v", sc.Text(), err)
			}
			recs = append(recs, rec)
		}
		if len(recs) != 2 {
			t.Fatalf("export of model a: %d lines, want the 2 finished tasks", len(recs))
		}
		e := recs[0]
		if e.TaskID != first.ID.String() || e.FinalAnswer != "done" || e.PullRequest != "https://forge.example/pr/7" ||
			e.Diff == "" || e.Prompt != "fix it" || e.Turns != 3 || len(e.Checks) == 0 || recs[1].Reason != fleet.ReasonTurnLimit {
			t.Fatalf("export: %+v", recs)
		}

		for query, field := range map[string]string{"label=nokv": "label", "compare=nokv": "compare",
			"limit=0": "limit", "limit=x": "limit", "since=yesterday": "since"} {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.srv.URL+"/v1/reports?"+query, nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Authorization", "Bearer "+testToken)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var eb api.ErrorBody
			_ = json.NewDecoder(resp.Body).Decode(&eb)
			_ = resp.Body.Close()
			if resp.StatusCode != http.StatusBadRequest || eb.Error.Field != field {
				t.Errorf("GET /v1/reports?%s: %d %+v, want a 400 naming %s", query, resp.StatusCode, eb.Error, field)
			}
		}
	})
}

// TestReportsKeepToTenants: a viewer's report counts its tenants' tasks
// only, and asking for another tenant yields nothing.
func TestReportsKeepToTenants(t *testing.T) {
	f := setupTenants(t, sqliteStore)
	ctx := context.Background()
	spec := validSpec("report me")
	spec.Labels = map[string]string{"backlog": "shared"}
	f.submitAs(t, "submitter", spec)
	f.submitAs(t, "b-submitter", spec)
	q := client.ReportQuery{Labels: spec.Labels}
	count := func(c *client.Client, q client.ReportQuery) int {
		t.Helper()
		rs, err := c.Reports(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		return rs.Report.Tasks
	}
	if n := count(f.clients["viewer"], q); n != 1 {
		t.Errorf("team-a's viewer's report counts %d tasks, want team-a's 1", n)
	}
	if n := count(f.client, q); n != 2 {
		t.Errorf("the bootstrap admin's report counts %d tasks, want both tenants' 2", n)
	}
	q.Tenant = "team-b"
	if n := count(f.clients["viewer"], q); n != 0 {
		t.Errorf("team-a's viewer asking for team-b counts %d tasks, want none", n)
	}
}
