package storetest

import (
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/store"
)

// scheduleTests check the cron schedules: stored as given, listed by
// tenant and due time, advanced by compare-and-set (one of many
// dispatchers wins a tick), paused and deleted.
var scheduleTests = map[string]func(*testing.T, *bundle){
	"CreateGetList": func(t *testing.T, b *bundle) {
		next := time.Date(2026, 11, 27, 3, 0, 0, 0, time.UTC)
		a := b.schedule(t, "a", next)
		got, err := b.s.GetSchedule(b.ctx, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Cron != "0 3 * * *" || got.Tenant != "a" || got.CreatedBy != "token:x" || !got.NextFireAt.Equal(next) ||
			got.Paused || !got.LastFireAt.IsZero() || got.CreatedAt.IsZero() {
			t.Fatalf("stored schedule %+v", got)
		}
		jsonEqual(t, "Spec", got.Spec, json.RawMessage(`{"prompt":"lint"}`))
		b.schedule(t, "b", next.Add(time.Hour))
		if l, err := b.s.ListSchedules(b.ctx, store.ListSchedulesParams{Tenants: []string{"a"}}); err != nil || len(l) != 1 || l[0].ID != a.ID {
			t.Fatalf("tenant a's schedules: %+v, %v", l, err)
		}
		if l, err := b.s.ListSchedules(b.ctx, store.ListSchedulesParams{DueBy: next}); err != nil || len(l) != 1 || l[0].ID != a.ID {
			t.Fatalf("schedules due by %s: %+v, %v", next, l, err)
		}
		if l, err := b.s.ListSchedules(b.ctx, store.ListSchedulesParams{Tenants: []string{}}); err != nil || len(l) != 0 {
			t.Fatalf("no tenant: %+v, %v", l, err)
		}
		_, err = b.s.GetSchedule(b.ctx, uuid.New())
		wantErr(t, err, store.ErrNotFound)
		_, err = b.s.CreateSchedule(b.ctx, store.CreateScheduleParams{Spec: json.RawMessage(`{}`), Tenant: "a", NextFireAt: next})
		wantErr(t, err, store.ErrInvalid)
	},
	"AdvanceIsCompareAndSet": func(t *testing.T, b *bundle) {
		tick := time.Date(2026, 11, 27, 3, 0, 0, 0, time.UTC)
		s := b.schedule(t, "a", tick)
		var wg sync.WaitGroup
		errs := make([]error, 4)
		for i := range errs {
			wg.Go(func() {
				_, errs[i] = b.s.AdvanceSchedule(b.ctx, store.AdvanceScheduleParams{ID: s.ID, From: tick, To: tick.Add(24 * time.Hour)})
			})
		}
		wg.Wait()
		won := 0
		for _, err := range errs {
			if err == nil {
				won++
			} else {
				wantErr(t, err, store.ErrConflict)
			}
		}
		got, _ := b.s.GetSchedule(b.ctx, s.ID)
		if won != 1 || !got.NextFireAt.Equal(tick.Add(24*time.Hour)) || !got.LastFireAt.Equal(tick) {
			t.Fatalf("%d advances won (%v); schedule %+v", won, errs, got)
		}
		_, err := b.s.AdvanceSchedule(b.ctx, store.AdvanceScheduleParams{ID: uuid.New(), From: tick, To: tick})
		wantErr(t, err, store.ErrNotFound)
	},
	"PauseAndDelete": func(t *testing.T, b *bundle) {
		tick := time.Date(2026, 11, 27, 3, 0, 0, 0, time.UTC)
		s := b.schedule(t, "a", tick)
		p, err := b.s.PauseSchedule(b.ctx, s.ID, true, time.Time{})
		if err != nil || !p.Paused || !p.NextFireAt.Equal(tick) {
			t.Fatalf("paused: %+v, %v", p, err)
		}
		if l, _ := b.s.ListSchedules(b.ctx, store.ListSchedulesParams{DueBy: tick}); len(l) != 0 {
			t.Fatalf("a paused schedule is due: %+v", l)
		}
		later := tick.Add(time.Hour)
		if p, err = b.s.PauseSchedule(b.ctx, s.ID, false, later); err != nil || p.Paused || !p.NextFireAt.Equal(later) {
			t.Fatalf("resumed: %+v, %v", p, err)
		}
		if err := b.s.DeleteSchedule(b.ctx, s.ID); err != nil {
			t.Fatal(err)
		}
		wantErr(t, b.s.DeleteSchedule(b.ctx, s.ID), store.ErrNotFound)
		_, err = b.s.PauseSchedule(b.ctx, s.ID, true, time.Time{})
		wantErr(t, err, store.ErrNotFound)
	},
}

// schedule stores a daily schedule of tenant firing next.
func (b *bundle) schedule(t *testing.T, tenant string, next time.Time) store.Schedule {
	t.Helper()
	s, err := b.s.CreateSchedule(b.ctx, store.CreateScheduleParams{Name: "nightly", Cron: "0 3 * * *",
		Spec: json.RawMessage(`{"prompt":"lint"}`), Tenant: tenant, CreatedBy: "token:x", NextFireAt: next})
	if err != nil {
		t.Fatalf("CreateSchedule: %v", err)
	}
	return s
}
