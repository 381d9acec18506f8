package bench

import (
	"cmp"
	"fmt"
	"io"
	"time"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/api"
)

// Two-class runs (Config.Priority, Config.Fairness): the bench submits
// Config.Tasks tasks of a first class, then LateTasks tasks of a second
// class after them, and reports each class's wait (submit to start) and
// how many first-class tasks overtook a second-class one.
//
//	--priority: the first class has priority 0 ("low"), the second 100 ("high")
//	--fairness: the first class is tenant "a", the second tenant "b"

// LateTasks is how many second-class tasks a two-class run submits.
const LateTasks = 20

// classLabel marks each task of a two-class run with its class.
const classLabel = "bench-class"

// ClassSlots is the default sessions per worker of a two-class run: few,
// so that a backlog forms and the order of starts is what is measured.
const ClassSlots = 8

// PriorityReport is what --priority measured (milliseconds).
type PriorityReport struct {
	LowP50WaitMS  float64 `json:"low_p50_wait_ms"`
	HighP50WaitMS float64 `json:"high_p50_wait_ms"`
	HighP99WaitMS float64 `json:"high_p99_wait_ms"`
	// LowStartedAfterHigh is, over the high tasks, the most low tasks that
	// started after a high task's submission returned (it was queued then)
	// and before it started; the target is at most Slots (the sessions
	// busy or being filled when it came).
	LowStartedAfterHigh int `json:"low_started_after_high"`
	// LowStartedAfterHighStored counts the same from when the high task
	// was stored (its created_at), a moment before the dispatcher queued
	// it: it adds the low tasks that started in between.
	LowStartedAfterHighStored int `json:"low_started_after_high_stored"`
	Slots                     int `json:"slots"`
}

// FairnessReport is what --fairness measured (milliseconds).
type FairnessReport struct {
	AP50WaitMS float64 `json:"a_p50_wait_ms"`
	BP50WaitMS float64 `json:"b_p50_wait_ms"`
	BP99WaitMS float64 `json:"b_p99_wait_ms"`
	// AStartedAfterB is, over tenant b's tasks, the most of tenant a's that
	// started after the submission of one of b's returned and before it
	// started; AStartedAfterBStored counts from when it was stored.
	AStartedAfterB       int `json:"a_started_after_b"`
	AStartedAfterBStored int `json:"a_started_after_b_stored"`
	Slots                int `json:"slots"`
}

// twoClass reports whether cfg is a two-class run.
func (c Config) twoClass() bool { return c.Priority || c.Fairness }

// total is how many tasks the run submits.
func (c Config) total() int {
	if c.twoClass() {
		return c.Tasks + LateTasks
	}
	return c.Tasks
}

// classOf shapes spec as a task of the first (late false) or second class.
func (c Config) classOf(spec *fleet.TaskSpec, late bool) {
	if !c.twoClass() {
		return
	}
	var class string
	switch {
	case c.Priority && late:
		spec.Priority, class = 100, "high"
	case c.Priority:
		class = "low"
	case late:
		spec.Tenant, class = "b", "b"
	default:
		spec.Tenant, class = "a", "a"
	}
	spec.Labels[classLabel] = class
}

// classWaits collects each class's tasks for classReport.
type classWaits struct {
	first, late []api.TaskView
}

func (w *classWaits) observe(t api.TaskView) {
	switch t.Labels[classLabel] {
	case "low", "a":
		w.first = append(w.first, t)
	case "high", "b":
		w.late = append(w.late, t)
	}
}

// finish fills rep's two-class report; queued holds when each late task's
// submission returned.
func (w *classWaits) finish(cfg Config, rep *Report, queued map[uuid.UUID]time.Time) {
	if !cfg.twoClass() {
		return
	}
	first, late := waits(w.first), waits(w.late)
	overtaken, overtakenStored := 0, 0
	for _, l := range w.late {
		overtakenStored = max(overtakenStored, startedBetween(w.first, l.CreatedAt, l.StartedAt))
		overtaken = max(overtaken, startedBetween(w.first, cmp.Or(queued[l.ID], l.CreatedAt), l.StartedAt))
	}
	slots := cfg.Workers * cfg.Slots
	if cfg.Priority {
		rep.Priority = &PriorityReport{LowP50WaitMS: first.P50, HighP50WaitMS: late.P50, HighP99WaitMS: late.P99,
			LowStartedAfterHigh: overtaken, LowStartedAfterHighStored: overtakenStored, Slots: slots}
	} else {
		rep.Fairness = &FairnessReport{AP50WaitMS: first.P50, BP50WaitMS: late.P50, BP99WaitMS: late.P99,
			AStartedAfterB: overtaken, AStartedAfterBStored: overtakenStored, Slots: slots}
	}
}

// startedBetween counts the tasks of ts that started after from and before
// to.
func startedBetween(ts []api.TaskView, from, to time.Time) int {
	n := 0
	for _, t := range ts {
		if t.StartedAt.After(from) && t.StartedAt.Before(to) {
			n++
		}
	}
	return n
}

// waits summarises the submit-to-start waits of tasks that started.
func waits(ts []api.TaskView) Percentiles {
	var ds []time.Duration
	for _, t := range ts {
		if !t.StartedAt.IsZero() {
			ds = append(ds, t.StartedAt.Sub(t.CreatedAt))
		}
	}
	return percentiles(ds)
}

// writeClasses prints a two-class report for people.
func (r Report) writeClasses(w io.Writer) {
	if p := r.Priority; p != nil {
		fmt.Fprintf(w, "  priority     wait p50 low %.1f ms, high %.1f ms (p99 %.1f ms); at most %d low tasks started while a high one was queued (%d since it was stored; %d slots)\n",
			p.LowP50WaitMS, p.HighP50WaitMS, p.HighP99WaitMS, p.LowStartedAfterHigh, p.LowStartedAfterHighStored, p.Slots)
	}
	if f := r.Fairness; f != nil {
		fmt.Fprintf(w, "  fairness     wait p50 a %.1f ms, b %.1f ms (p99 %.1f ms); at most %d of a's tasks started while one of b's was queued (%d since it was stored; %d slots)\n",
			f.AP50WaitMS, f.BP50WaitMS, f.BP99WaitMS, f.AStartedAfterB, f.AStartedAfterBStored, f.Slots)
	}
}
