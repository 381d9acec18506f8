package chaos

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
)

// The capped-key scenario's backlog runs under cappedKey, which every
// worker's configuration caps at cappedMax running tasks (queue/gate.go):
// a killed worker's tokens must come back (after AckWait, with its
// messages) and the maximum must hold throughout.
const (
	cappedKey = "chaos-capped"
	cappedMax = 3
)

// cappedWorkerKill kills worker-1, which holds some of the capped key's
// tokens, and starts it again.
func cappedWorkerKill(ctx context.Context, f *fleetProcs) (string, error) {
	f.workers[0].kill()
	return fmt.Sprintf("worker-1 SIGKILL, restarted, key %s at most %d running", cappedKey, cappedMax), f.startWorker(ctx, 0)
}

// checkCapped fails when more of the backlog's sessions than cappedMax
// overlapped in time. A session lives from its creation (after its task's
// claim, so after its worker took a token) to its last update (its end,
// before the token was handed back, or its worker's death, after which
// the token stayed taken until AckWait), so overlapping sessions held
// tokens at once.
func checkCapped(ctx context.Context, f *fleetProcs, roots []uuid.UUID) error {
	rows, err := f.db.Query(ctx, `SELECT s.created_at, s.updated_at FROM sessions s JOIN tasks t ON t.id = s.task_id
		WHERE t.root_id = ANY($1)`, roots)
	if err != nil {
		return fmt.Errorf("chaos: the capped key's sessions: %w", err)
	}
	defer rows.Close()
	type edge struct {
		at    time.Time
		delta int
	}
	var edges []edge
	for rows.Next() {
		var from, to time.Time
		if err := rows.Scan(&from, &to); err != nil {
			return err
		}
		edges = append(edges, edge{from, 1}, edge{to, -1})
	}
	if err := rows.Err(); err != nil {
		return err
	}
	// Ends before starts at the same instant: touching sessions do not overlap.
	slices.SortFunc(edges, func(a, b edge) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		return a.delta - b.delta
	})
	running, most := 0, 0
	for _, e := range edges {
		running += e.delta
		most = max(most, running)
	}
	if most > cappedMax {
		return fmt.Errorf("chaos: %d sessions of key %s ran at once, its maximum is %d", most, cappedKey, cappedMax)
	}
	return nil
}
