package report

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/api"
	"github.com/agentfleet/agentfleet/store"
)

func TestWilson(t *testing.T) {
	// Reference values of the Wilson score interval at z = 1.96.
	for _, c := range []struct {
		k, n   int
		lo, hi float64
	}{{8, 10, 0.4902, 0.9433}, {0, 10, 0, 0.2775}, {10, 10, 0.7225, 1}, {120, 200, 0.5308, 0.6654}} {
		lo, hi := Wilson(c.k, c.n, 1.96)
		if math.Abs(lo-c.lo) > 1e-4 || math.Abs(hi-c.hi) > 1e-4 {
			t.Errorf("Wilson(%d, %d) = [%.4f, %.4f], want [%.4f, %.4f]", c.k, c.n, lo, hi, c.lo, c.hi)
		}
	}
	if lo, hi := Wilson(0, 0, 1.96); lo != 0 || hi != 0 {
		t.Errorf("no trial: [%v, %v]", lo, hi)
	}
}

func result(t *testing.T, turns int, verdict string) json.RawMessage {
	t.Helper()
	r := fleet.TaskResult{Success: true, TurnsUsed: turns}
	if verdict != "" {
		r.Checks = &fleet.CheckReport{Verdict: verdict}
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestBuild(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 10, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	task := func(state store.TaskState, created, started, finished int, reason string, res json.RawMessage, cost float64) store.ReportTask {
		rt := store.ReportTask{Task: store.Task{ID: uuid.New(), State: state, CreatedAt: at(created), Error: reason, Result: res},
			CostUSD: cost, Usage: store.Usage{InputTokens: 100, OutputTokens: 10}}
		if started >= 0 {
			rt.Task.StartedAt = at(started)
		}
		if finished >= 0 {
			rt.Task.FinishedAt = at(finished)
		}
		return rt
	}
	tasks := []store.ReportTask{
		task(store.TaskSucceeded, 0, 10, 100, "", result(t, 4, fleet.VerdictFixed), 1),
		task(store.TaskSucceeded, 0, 20, 200, "", result(t, 2, ""), 1),
		task(store.TaskFailed, 0, 30, 300, fleet.ReasonTurnLimit, result(t, 9, fleet.VerdictFailed), 2),
		task(store.TaskCancelled, 0, -1, 400, fleet.ReasonCancelled, nil, 0),
		task(store.TaskRunning, 100, 150, -1, "", nil, 0.5),
		task(store.TaskQueued, 200, -1, -1, "", nil, 0),
	}
	now := at(460)
	rep := Build(map[string]string{"backlog": "q3"}, store.ReportTasksResult{Tasks: tasks}, now)
	if rep.Tasks != 6 || rep.Now != (api.ReportCounts{Queued: 1, Running: 1, Succeeded: 2, Failed: 2}) {
		t.Fatalf("now: %+v", rep.Now)
	}
	if rep.Finished != 4 || rep.Succeeded != 2 || rep.SuccessRate != 0.5 {
		t.Fatalf("success: %d of %d, %v", rep.Succeeded, rep.Finished, rep.SuccessRate)
	}
	if rep.CostUSD != 4.5 || rep.CostPerSuccessUSD != 2.25 || rep.TokensPerSuccess != 330 {
		t.Fatalf("cost %v, per success %v, tokens per success %v", rep.CostUSD, rep.CostPerSuccessUSD, rep.TokensPerSuccess)
	}
	if p := rep.TimeToResult; p.N != 4 || p.P50 != 200 || p.P90 != 400 || p.Max != 400 {
		t.Fatalf("time to result: %+v", p)
	}
	if rep.MedianTurns != 4 {
		t.Fatalf("median turns %v, want 4 (of 2, 4, 9)", rep.MedianTurns)
	}
	row := func(o, d string) api.OutcomeRow { return api.OutcomeRow{Outcome: o, Detail: d, Tasks: 1} }
	want := []api.OutcomeRow{row("succeeded", "fixed"), row("succeeded", NoChecks), row("failed", "cancelled"), row("failed", "turn_limit")}
	if len(rep.Outcomes) != len(want) {
		t.Fatalf("outcomes: %+v", rep.Outcomes)
	}
	for i := range want {
		if rep.Outcomes[i] != want[i] {
			t.Fatalf("outcome %d: %+v, want %+v", i, rep.Outcomes[i], want[i])
		}
	}
	if f := rep.TopFailures; len(f) != 2 || f[0].Reason != "cancelled" || f[0].Examples[0] != tasks[3].Task.ID.String() {
		t.Fatalf("top failures: %+v", f)
	}
	bd := rep.BurnDown
	if len(bd) != BurnDownPoints || !bd[0].At.Equal(t0) || !bd[len(bd)-1].At.Equal(now) {
		t.Fatalf("burn-down spans %v .. %v", bd[0].At, bd[len(bd)-1].At)
	}
	if bd[0].ReportCounts != (api.ReportCounts{Queued: 4}) || bd[len(bd)-1].ReportCounts != rep.Now {
		t.Fatalf("burn-down ends: %+v .. %+v", bd[0], bd[len(bd)-1])
	}

	var md, csv bytes.Buffer
	other := rep
	other.Filter = map[string]string{"backlog": "q3", "model": "b"}
	if err := Markdown(&md, api.Reports{Report: rep, Compare: &other}); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"|  | backlog=q3 | backlog=q3, model=b |", "| Success rate (95% Wilson interval) | 50.0% [15.0%, 85.0%] |",
		"| Cost per success | $2.2500 |", "| Time to result p50 / p90 / p99 | 200.0s / 400.0s / 400.0s |", "| failed | turn_limit | 1 |"} {
		if !strings.Contains(md.String(), s) {
			t.Errorf("Markdown lacks %q:\n%s", s, md.String())
		}
	}
	if err := CSV(&csv, api.Reports{Report: rep}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(csv.String()), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[1], "backlog=q3,6,1,1,2,2,4,0.5,") {
		t.Fatalf("CSV:\n%s", csv.String())
	}
}

func TestEmpty(t *testing.T) {
	rep := Build(nil, store.ReportTasksResult{}, time.Now())
	if rep.Tasks != 0 || len(rep.BurnDown) != 0 || rep.SuccessRate != 0 || rep.Filter == nil {
		t.Fatalf("empty report: %+v", rep)
	}
	var md bytes.Buffer
	if err := Markdown(&md, api.Reports{Report: rep}); err != nil || !strings.Contains(md.String(), "| all tasks |") {
		t.Fatalf("%v\n%s", err, md.String())
	}
}

func TestCompareFilter(t *testing.T) {
	got := CompareFilter(map[string]string{"backlog": "q3", "model": "a"}, map[string]string{"model": "b"})
	if FilterName(got) != "backlog=q3, model=b" {
		t.Fatalf("got %v", got)
	}
}
