package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/agentfleet/agentfleet/store"
)

var usageTests = map[string]func(*testing.T, *bundle){
	// Grouped: three sessions of three tasks, summed by label value,
	// profile, model, day and in total; a label filter narrows them.
	"Grouped": func(t *testing.T, b *bundle) {
		type sess struct {
			labels         map[string]string
			profile, model string
			in, read       int64
			cost           float64
		}
		for _, s := range []sess{
			{map[string]string{"team": "web", "env": "ci"}, "anthropic", "claude-sonnet-4-5", 100, 80, 0.5},
			{map[string]string{"team": "web"}, "openai", "gpt-5", 50, 0, 0.25},
			{map[string]string{"team": "data"}, "anthropic", "claude-sonnet-4-5", 10, 5, 1},
			{nil, "gemini", "gemini-2.5-pro", 1, 0, 0.125},
		} {
			task := b.task(t, store.CreateTaskParams{Labels: s.labels})
			ses, err := b.s.CreateSession(b.ctx, store.CreateSessionParams{TaskID: task.ID, Profile: s.profile, Model: s.model})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := b.s.UpdateSession(b.ctx, store.UpdateSessionParams{ID: ses.ID,
				AddUsage: store.Usage{InputTokens: s.in, CacheReadTokens: s.read, OutputTokens: 1}, AddCostUSD: s.cost}); err != nil {
				t.Fatal(err)
			}
		}
		rows := func(p store.UsageParams) map[string]store.UsageRow {
			t.Helper()
			got, err := b.s.Usage(b.ctx, p)
			if err != nil {
				t.Fatalf("Usage(%+v): %v", p, err)
			}
			m := map[string]store.UsageRow{}
			for i, r := range got {
				if i > 0 && got[i-1].Key >= r.Key {
					t.Fatalf("rows not in key order: %+v", got)
				}
				m[r.Key] = r
			}
			return m
		}
		byTeam := rows(store.UsageParams{GroupBy: store.GroupLabel, LabelKey: "team"})
		if w := byTeam["web"]; len(byTeam) != 3 || w.Tasks != 2 || w.Sessions != 2 || w.Usage.InputTokens != 150 ||
			w.Usage.CacheReadTokens != 80 || w.CostUSD != 0.75 || byTeam[""].CostUSD != 0.125 {
			t.Fatalf("by team: %+v", byTeam)
		}
		byProfile := rows(store.UsageParams{GroupBy: store.GroupProfile})
		if a := byProfile["anthropic"]; len(byProfile) != 3 || a.Usage.InputTokens != 110 || a.CostUSD != 1.5 {
			t.Fatalf("by profile: %+v", byProfile)
		}
		if m := rows(store.UsageParams{GroupBy: store.GroupModel}); m["gpt-5"].Usage.OutputTokens != 1 || len(m) != 3 {
			t.Fatalf("by model: %+v", m)
		}
		today := time.Now().UTC().Format("2006-01-02")
		if d := rows(store.UsageParams{GroupBy: store.GroupDay}); len(d) != 1 || d[today].Sessions != 4 {
			t.Fatalf("by day: %+v (today %s)", d, today)
		}
		if tot := rows(store.UsageParams{Labels: map[string]string{"team": "web"}}); tot[""].CostUSD != 0.75 || len(tot) != 1 {
			t.Fatalf("total of team=web: %+v", tot)
		}
		if none := rows(store.UsageParams{Since: time.Now().Add(time.Hour)}); len(none) != 0 {
			t.Fatalf("sessions of the future: %+v", none)
		}
	},
	"BadInput": func(t *testing.T, b *bundle) {
		for _, p := range []store.UsageParams{{GroupBy: "week"}, {GroupBy: store.GroupLabel},
			{Since: time.Now(), Until: time.Now().Add(-time.Hour)}} {
			_, err := b.s.Usage(b.ctx, p)
			var inv *store.InvalidError
			if !errors.As(err, &inv) || inv.Field == "" {
				t.Errorf("Usage(%+v) = %v, want an InvalidError naming the field", p, err)
			}
		}
	},
}
