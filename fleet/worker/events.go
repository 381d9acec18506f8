package worker

import (
	"fmt"
	"time"

	"github.com/agentfleet/agentfleet/agent"
	"github.com/agentfleet/agentfleet/fleet/internal/coalesce"
	"github.com/agentfleet/agentfleet/fleet/worker/internal/eventpump"
)

// eventSink is where the worker's runs publish their events (package
// eventpump); Run has set w.pub before any run starts.
func (w *Worker) eventSink() eventpump.Sink {
	return eventpump.Sink{Queue: w.q, Publisher: w.pub, Store: w.st, GiveUp: w.graceOver,
		Merge:     coalesce.Config{Window: w.cfg.DeltaWindow, MaxBytes: w.cfg.DeltaMaxBytes},
		Published: w.metrics.events.Inc}
}

// eventMetrics returns the observer of one run's events that feeds the
// tool and permission metrics. Its pump calls it from one goroutine.
func (w *Worker) eventMetrics() func(agent.Event) {
	m := w.metrics
	start := map[string]time.Time{} // tool call id -> TOOL_CALL_START time
	return func(ev agent.Event) {
		switch ev.Kind {
		case agent.EventToolCallStart:
			start[ev.CallID] = ev.Time
		case agent.EventPermissionDenied:
			m.denials.WithLabelValues(ev.ToolName, ev.Permission.Rule).Inc()
		case agent.EventApprovalRequested:
			m.approvals.Inc()
		case agent.EventToolCallEnd:
			started, ok := start[ev.CallID]
			delete(start, ev.CallID)
			m.toolCalls.WithLabelValues(ev.ToolName, fmt.Sprint(ev.IsError)).Inc()
			if ok {
				m.toolDuration.WithLabelValues(ev.ToolName).Observe(ev.Time.Sub(started).Seconds())
			}
		}
	}
}
