package worker

import (
	"context"
	"strings"

	"github.com/agentfleet/agentfleet/agent"
	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/store"
)

// maxViolationsInError bounds the violations a failed task's result
// error lists.
const maxViolationsInError = 20

// resultSchemaFailed ends a task whose final answer still did not match
// its result_schema after the session's repair rounds (agent
// StopResultSchema): failed with reason result_schema, the violations in
// the result's error.
func (r *run) resultSchemaFailed(ctx context.Context, out agent.Outcome) settlement {
	return r.finish(ctx, store.TaskFailed, fleet.ReasonResultSchema, r.result(out, false, violationsError(out.Violations)))
}

// violationsError says what the last answer got wrong.
func violationsError(v []string) string {
	more := ""
	if len(v) > maxViolationsInError {
		more, v = "; and more", v[:maxViolationsInError]
	}
	return "the final answer does not match the result schema: " + strings.Join(v, "; ") + more
}
