package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"math"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/api"
	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/llm/sim"
)

// Stalled sessions (Config.StallRate): a share of the tasks, spread evenly
// over the submission, carry stallMarker in their prompt and the label
// stallLabel. The bench model answers such a session with one identical
// glob call every round and never with an answer, the loop the progress
// watchdog (agent/watchdog.go) exists to stop: told after
// session.no_progress_rounds rounds (default 8), stopped after half as
// many more, the task failing with reason no_progress. The report says
// how many were stopped so and the turns each spent; a stalled task the
// watchdog missed runs on to its turn limit.

const (
	stallMarker = "[bench: this session stalls]"
	stallLabel  = "bench_stall"
)

// stalls reports whether task i of the bench is a stalled one: the tasks
// where the running count of rate × tasks steps up, so any prefix holds
// its share.
func stalls(i int, rate float64) bool {
	return rate > 0 && math.Floor(float64(i+1)*rate) > math.Floor(float64(i)*rate)
}

// markStalled makes spec a stalled task.
func markStalled(spec *fleet.TaskSpec) {
	spec.Prompt += " " + stallMarker
	spec.Labels[stallLabel] = "yes"
}

// stallReply is the bench model's answer in a stalled session: the same
// call with the same arguments whatever the round (its id carries the
// round, which benchTurn counts).
func stallReply(turn int, usage llm.Usage) sim.Reply {
	return sim.Reply{Usage: usage, ToolCalls: []sim.ToolCallReply{{ID: fmt.Sprintf("toolu_bench_%d", turn), Name: "glob",
		Arguments: `{"pattern":"*.stalled"}`}}}
}

// Stalled is the report on the stalled tasks.
type Stalled struct {
	StallRate float64 `json:"stall_rate,omitempty"`
	// StalledTasks are the tasks whose session stalls; NoProgressStopped
	// those the watchdog stopped (failed with reason no_progress).
	StalledTasks      int `json:"stalled_tasks,omitempty"`
	NoProgressStopped int `json:"no_progress_stopped"`
	// TurnsSpentStalled is the average of the turns a stalled task used
	// before it ended, MaxTurnsStalled the most any used.
	TurnsSpentStalled float64 `json:"turns_spent_stalled"`
	MaxTurnsStalled   int     `json:"max_turns_stalled,omitempty"`
	turns             int
}

// observe counts one stalled task as it ended.
func (s *Stalled) observe(t api.TaskView) {
	s.StalledTasks++
	if t.Error == fleet.ReasonNoProgress {
		s.NoProgressStopped++
	}
	var res fleet.TaskResult
	if json.Unmarshal(t.Result, &res) == nil {
		s.turns += res.TurnsUsed
		s.MaxTurnsStalled = max(s.MaxTurnsStalled, res.TurnsUsed)
	}
}

// finish computes the average once every task was observed.
func (s *Stalled) finish(rate float64) {
	s.StallRate = rate
	if s.StalledTasks > 0 {
		s.TurnsSpentStalled = float64(s.turns) / float64(s.StalledTasks)
	}
}

// Unexpected is how many tasks did not succeed for a reason other than the
// stall they were built to have.
func (r Report) Unexpected() int {
	return r.Failed - r.NoProgressStopped
}

func (s *Stalled) writeText(w io.Writer) {
	if s.StalledTasks == 0 {
		return
	}
	fmt.Fprintf(w, "  stalled      %d tasks, %d stopped as no_progress, %.1f turns each on average (at most %d)\n",
		s.StalledTasks, s.NoProgressStopped, s.TurnsSpentStalled, s.MaxTurnsStalled)
}
