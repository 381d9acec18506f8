package main

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/agentfleet/agentfleet/fleet"
)

// describeOutcomeEvent describes a check run or a delivery event; ok is
// false for other kinds.
func describeOutcomeEvent(kind string, data json.RawMessage) (string, bool) {
	switch kind {
	case fleet.KindCheckEnd:
		var r fleet.CheckRun
		if json.Unmarshal(data, &r) != nil {
			return "", false
		}
		return "check " + checkLine(r), true
	case fleet.KindDelivery:
		var d fleet.DeliveryResult
		if json.Unmarshal(data, &d) != nil {
			return "", false
		}
		return "delivery: " + deliveryLine(d), true
	}
	return "", false
}

// checkLine is one run of a check in a line.
func checkLine(r fleet.CheckRun) string {
	status := "passed"
	switch {
	case r.TimedOut:
		status = "timed out"
	case !r.Passed:
		status = fmt.Sprintf("failed (exit %d)", r.ExitCode)
	}
	when := r.Phase
	if r.Phase == fleet.CheckAfter && r.Round > 0 {
		when = fmt.Sprintf("after repair %d", r.Round)
	}
	return fmt.Sprintf("%s %s %s in %dms: %s", r.Name, when, status, r.DurationMS, oneLine(r.Command, 120))
}

// deliveryLine is a delivery in a line.
func deliveryLine(d fleet.DeliveryResult) string {
	s := "branch " + d.Branch
	if d.Commit != "" {
		s += " at " + d.Commit[:min(12, len(d.Commit))]
	}
	if d.Pushed {
		s += " pushed"
	}
	if d.RequestURL != "" {
		s += fmt.Sprintf(", pull request #%d %s", d.RequestNumber, d.RequestURL)
	}
	if d.Skipped != "" {
		s += " (not delivered: " + d.Skipped + ")"
	}
	if d.Error != "" {
		s += " (failed: " + d.Error + ")"
	}
	return s
}

// printOutcome prints a result's checks and delivery as rows of a task's
// summary.
func printOutcome(w io.Writer, r fleet.TaskResult) {
	if c := r.Checks; c != nil {
		fmt.Fprintf(w, "checks\t%s (%d repair rounds)\n", c.Verdict, c.RepairRounds)
		for _, run := range c.Runs {
			fmt.Fprintf(w, "\t%s\n", checkLine(run))
		}
	}
	if d := r.Delivery; d != nil {
		fmt.Fprintf(w, "delivery\t%s\n", deliveryLine(*d))
	}
}
