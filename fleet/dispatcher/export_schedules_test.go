package dispatcher

import (
	"context"
	"time"
)

// FireDue runs one pass of the schedules at now, as the dispatcher's
// loop does each ScheduleInterval, for tests that control the clock.
func (d *Dispatcher) FireDue(ctx context.Context, now time.Time) { d.fireDue(ctx, now) }

// StartDue runs one pass of the delayed starts (run_at.go) at now.
func (d *Dispatcher) StartDue(ctx context.Context, now time.Time) { d.startDue(ctx, now) }
