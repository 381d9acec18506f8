package dispatcher

import (
	"context"
	"time"
)

// PruneGitStore runs one sweep of the fleet git store at now, as Run
// does every gitStorePruneEvery, for tests that control the clock.
func (d *Dispatcher) PruneGitStore(ctx context.Context, now time.Time) (int, error) {
	g, err := d.fleetGitStore()
	if g == nil || err != nil {
		return 0, err
	}
	return g.Prune(ctx, now)
}
