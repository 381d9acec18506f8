package worker_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/fleettest"
	"github.com/agentfleet/agentfleet/store"
)

const sumSchema = `{"type":"object","properties":{"sum":{"type":"integer"}},"required":["sum"],"additionalProperties":false}`

// TestResultSchemaStructured: a task with a result_schema whose model
// answers in prose first is told what is wrong, answers in JSON, and ends
// succeeded with the answer in result.structured.
func TestResultSchemaStructured(t *testing.T) {
	t.Parallel()
	f := fleettest.Start(t, fleettest.Options{Workers: 1})
	spec := fleettest.Spec("structured", fleettest.Step{Calls: []fleettest.Call{fleettest.Shell("echo $((2+3))")}},
		fleettest.Step{Text: "The sum is 5."}, fleettest.Step{Text: `{"sum": 5}`})
	spec.ResultSchema = json.RawMessage(sumSchema)
	task := f.WaitDone(f.Submit(spec))
	res := fleettest.Result(t, task)
	var got struct {
		Sum *int `json:"sum"`
	}
	if task.State != store.TaskSucceeded || json.Unmarshal(res.Structured, &got) != nil || got.Sum == nil || *got.Sum != 5 {
		t.Fatalf("task %s %q, structured %s; want succeeded with {\"sum\":5}", task.State, task.Error, res.Structured)
	}
	if res.TurnsUsed != 3 {
		t.Fatalf("%d turns, want 3 (a tool round, a refused answer, the valid one)", res.TurnsUsed)
	}
}

// TestResultSchemaFails: an answer that never matches fails the task with
// reason result_schema, the violations in the result's error, and no
// structured answer.
func TestResultSchemaFails(t *testing.T) {
	t.Parallel()
	f := fleettest.Start(t, fleettest.Options{Workers: 1})
	var steps []fleettest.Step
	for range 4 {
		steps = append(steps, fleettest.Step{Text: `{"sum": "five"}`})
	}
	spec := fleettest.Spec("never structured", steps...)
	spec.ResultSchema = json.RawMessage(sumSchema)
	task := f.WaitDone(f.Submit(spec))
	res := fleettest.Result(t, task)
	if task.State != store.TaskFailed || task.Error != fleet.ReasonResultSchema || res.Structured != nil {
		t.Fatalf("task %s %q, structured %s; want failed with %s and none", task.State, task.Error, res.Structured, fleet.ReasonResultSchema)
	}
	if !strings.Contains(res.Error, "at /sum") || res.TurnsUsed != 3 {
		t.Fatalf("result error %q after %d turns; want the violation at /sum after 3 turns", res.Error, res.TurnsUsed)
	}
}
