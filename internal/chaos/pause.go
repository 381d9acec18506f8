package chaos

import (
	"context"
	"fmt"
	"time"

	"github.com/agentfleet/agentfleet/fleet/api"
	"github.com/agentfleet/agentfleet/fleet/client"
)

// pauseClaimGrace is how long after a pause is in force a claim already in
// flight (its message fetched before the workers saw the pause) may still
// start a task of the label; every later start is a failure.
const pauseClaimGrace = time.Second

// pausedLabelWorkerKill pauses the scenario's label once its backlog is
// under way, kills worker-1 with SIGKILL and starts it again, and waits
// until every task of the label that had started has ended (those of the
// killed worker through a takeover) and every queued one is held. No task
// of the label may start meanwhile. It then resumes the label: the
// verification that follows checks that every task ran to its end exactly
// once.
func pausedLabelWorkerKill(ctx context.Context, f *fleetProcs, name string) (string, error) {
	filter := api.BulkFilter{Labels: map[string]string{"chaos": name}}
	if err := bulkWait(ctx, f, api.BulkRequest{Action: api.BulkPause, Filter: filter, Reason: "chaos"}); err != nil {
		return "", err
	}
	pausedAt := time.Now()
	f.workers[0].kill()
	if err := f.startWorker(ctx, 0); err != nil {
		return "label paused, worker-1 SIGKILL", err
	}
	held, err := waitHeld(ctx, f, filter, f.cfg.AckWait+f.cfg.StaleAfter+2*time.Minute)
	what := fmt.Sprintf("label paused, worker-1 SIGKILL, restarted; %d held", held)
	if err != nil {
		return what, err
	}
	var started int
	if err := f.db.QueryRow(ctx, `SELECT count(*) FROM tasks WHERE labels @> $1 AND started_at > $2`,
		map[string]string{"chaos": name}, pausedAt.Add(pauseClaimGrace)).Scan(&started); err != nil {
		return what, fmt.Errorf("chaos: counting tasks started while paused: %w", err)
	}
	what += fmt.Sprintf(", %d started while paused; resumed", started)
	if started > 0 {
		return what, fmt.Errorf("chaos: %d tasks of the paused label started", started)
	}
	return what, bulkWait(ctx, f, api.BulkRequest{Action: api.BulkResume, Filter: filter})
}

// bulkWait runs a bulk action and waits for its job to end well.
func bulkWait(ctx context.Context, f *fleetProcs, req api.BulkRequest) error {
	job, err := f.client.Bulk(ctx, req)
	if err != nil {
		return fmt.Errorf("chaos: bulk %s: %w", req.Action, err)
	}
	job, err = f.client.WaitBulk(ctx, job.ID, 100*time.Millisecond, nil)
	if err != nil || job.State != api.BulkDone {
		return fmt.Errorf("chaos: bulk %s: %+v, %v", req.Action, job, err)
	}
	return nil
}

// waitHeld waits until no task of the filter runs and every queued one is
// held by a worker, and returns how many are held.
func waitHeld(ctx context.Context, f *fleetProcs, filter api.BulkFilter, d time.Duration) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	var last string
	for {
		prev, err1 := f.client.BulkPreview(ctx, api.BulkRequest{Action: api.BulkPause, Filter: filter})
		counts, err2 := f.client.CountsFiltered(ctx, client.ListFilter{Labels: filter.Labels})
		pauses, err3 := f.client.Pauses(ctx)
		if err1 == nil && err2 == nil && err3 == nil {
			if counts["running"] == 0 && counts["waiting"] == 0 && pauses.Held == prev.Matched {
				return pauses.Held, nil
			}
			last = fmt.Sprintf("counts %v, %d queued, %d held", counts, prev.Matched, pauses.Held)
		}
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("chaos: the paused label did not settle in %s (%s)", d, last)
		case <-tick.C:
		}
	}
}
