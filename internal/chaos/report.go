package chaos

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"
)

// PrintTable writes one row per scenario: what happened to the tasks,
// the turns, the model requests and the events, and how long recovery took
// against the run's ack wait and stale_after.
func PrintTable(out io.Writer, cfg Config, results []Result) {
	fmt.Fprintf(out, "\n%d tasks per scenario, each sleeping %s; %d workers x %d sessions; ack wait %s, stale_after %s, heartbeat %s\n",
		cfg.Tasks, cfg.Sleep, workers, cfg.Slots, cfg.AckWait, cfg.StaleAfter, cfg.Heartbeat)
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "scenario\ttasks\tsucceeded\tfailed\tstuck\tturns missing\tturns doubled\tmodel repeats\tevents\tevent gaps\tevent doubles\tno SESSION_END\tfault at\tstall\tdrain\tverdict\t")
	for _, r := range results {
		verdict := "ok"
		if r.Lost() {
			verdict = "LOST"
		}
		fmt.Fprintf(w, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t\n",
			r.Scenario, r.Tasks, r.Succeeded, r.Failed, r.Stuck, r.MissingTurns, r.DuplicateTurns+r.TurnSeqGaps,
			r.ModelRepeats, r.Events, r.EventGaps, r.EventDuplicates, r.MissingSessionEnds,
			secs(r.FaultAt), secs(r.Stall), secs(r.Drain), verdict)
	}
	_ = w.Flush()
	for _, r := range results {
		fmt.Fprintf(out, "  %s: %s", r.Scenario, r.Fault)
		if len(r.FailureReasons) > 0 {
			fmt.Fprintf(out, "; failures by reason %v", r.FailureReasons)
		}
		fmt.Fprintln(out)
		for _, finding := range r.Findings {
			fmt.Fprintf(out, "    %s\n", finding)
		}
	}
}

func secs(d time.Duration) string { return fmt.Sprintf("%.1fs", d.Seconds()) }
