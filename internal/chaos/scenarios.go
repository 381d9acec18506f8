package chaos

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"syscall"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// scenario is one fault injected into a running backlog.
type scenario struct {
	name string
	// tree makes the backlog parents that spawn children and park; local
	// puts them in local workspaces whose children travel (localtree.go);
	// capped runs the backlog under a concurrency key with a maximum
	// (capped.go).
	tree, local, capped bool
	// inject runs once the backlog is under way (a quarter done, or for a
	// tree half the parents parked) and returns when the fault is over or,
	// for a process that stays dead, once it was injected.
	inject func(ctx context.Context, f *fleetProcs) (string, error)
}

// scenarios returns every scenario; the order puts the cheap ones first.
func scenarios(cfg Config) []scenario {
	return []scenario{
		{name: "worker-sigkill-restarted", inject: func(ctx context.Context, f *fleetProcs) (string, error) {
			f.workers[0].kill()
			return "worker-1 SIGKILL, restarted", f.startWorker(ctx, 0)
		}},
		{name: "worker-sigkill-gone", inject: func(ctx context.Context, f *fleetProcs) (string, error) {
			f.workers[0].kill()
			return "worker-1 SIGKILL, not restarted", nil
		}},
		{name: "label-paused-worker-sigkill", inject: func(ctx context.Context, f *fleetProcs) (string, error) {
			return pausedLabelWorkerKill(ctx, f, "label-paused-worker-sigkill") // pause.go
		}},
		{name: "capped-key-worker-sigkill", capped: true, inject: cappedWorkerKill},
		{name: "worker-drain", inject: func(ctx context.Context, f *fleetProcs) (string, error) {
			return drain(ctx, f, 0)
		}},
		{name: "worker-drain-1s-grace", inject: func(ctx context.Context, f *fleetProcs) (string, error) {
			return drain(ctx, f, shortGraceNode)
		}},
		{name: "nats-leader-sigkill", inject: func(ctx context.Context, f *fleetProcs) (string, error) {
			return killNATS(ctx, f, true)
		}},
		{name: "nats-follower-sigkill", inject: func(ctx context.Context, f *fleetProcs) (string, error) {
			return killNATS(ctx, f, false)
		}},
		{name: "postgres-fast-restart", inject: func(ctx context.Context, f *fleetProcs) (string, error) {
			return "postgres fast shutdown and start", f.pg.Restart(ctx)
		}},
		{name: "postgres-down-short", inject: func(ctx context.Context, f *fleetProcs) (string, error) {
			return postgresDown(ctx, f, cfg.ShortOutage)
		}},
		{name: "postgres-down-long", inject: func(ctx context.Context, f *fleetProcs) (string, error) {
			return postgresDown(ctx, f, cfg.LongOutage)
		}},
		{name: "postgres-connections-terminated", inject: func(ctx context.Context, f *fleetProcs) (string, error) {
			return terminateConnections(ctx, f, cfg.ShortOutage)
		}},
		{name: "tree-parked-parent-worker-sigkill", tree: true, inject: func(ctx context.Context, f *fleetProcs) (string, error) {
			i, err := busiestParkedWorker(ctx, f)
			if err != nil {
				return "", err
			}
			f.workers[i].kill()
			return fmt.Sprintf("worker-%d (holding parked parents) SIGKILL, restarted", i+1), f.startWorker(ctx, i)
		}},
		{name: "tree-local-parent-worker-gone", tree: true, local: true, inject: killParkedWorkerAndDisk},
	}
}

// drain sends SIGTERM to worker i, waits for it to exit (it must, within
// its grace and hand-back), and starts it again.
func drain(ctx context.Context, f *fleetProcs, i int) (string, error) {
	if err := f.workers[i].stop(syscall.SIGTERM, 2*time.Minute); err != nil {
		return "", err
	}
	return fmt.Sprintf("worker-%d SIGTERM (drained), restarted", i+1), f.startWorker(ctx, i)
}

// killNATS kills the node leading the EVENTS stream (leader) or one
// leading none of the streams (follower), and starts it again 10 s later.
func killNATS(ctx context.Context, f *fleetProcs, leader bool) (string, error) {
	led, err := streamLeaders(ctx, f)
	if err != nil {
		return "", err
	}
	victim := -1
	for i := range natsNodes {
		name := fmt.Sprintf("nats-%d", i+1)
		if leader && slices.Contains(led[name], "EVENTS") || !leader && len(led[name]) == 0 {
			victim = i
			break
		}
	}
	if victim < 0 {
		// Every node leads something: the follower is the one leading least.
		victim = leastLeading(led)
	}
	name := fmt.Sprintf("nats-%d", victim+1)
	f.nats[victim].kill()
	what := fmt.Sprintf("%s SIGKILL (leading %v), restarted after 10 s", name, led[name])
	if err := sleepCtx(ctx, 10*time.Second); err != nil {
		return what, err
	}
	if err := f.nats[victim].start(); err != nil {
		return what, err
	}
	return what, waitHTTP(ctx, f.monitors[victim]+"/healthz?js-enabled-only=true", f.nats[victim])
}

// streamLeaders maps each node name to the fleet's streams it leads. The
// run's NATS user is the dispatcher's, which may read those streams'
// info but not list every stream of the account.
func streamLeaders(ctx context.Context, f *fleetProcs) (map[string][]string, error) {
	led := map[string][]string{}
	for _, name := range []string{"TASKS", "EVENTS", "TASKS_DEADLETTER", "KV_agentfleet_budgets", "KV_agentfleet_ratelimits", "KV_agentfleet_holds"} {
		s, err := f.js.Stream(ctx, name)
		if errors.Is(err, jetstream.ErrStreamNotFound) {
			continue // a bucket nothing has made yet
		}
		if err != nil {
			return nil, err
		}
		info, err := s.Info(ctx)
		if err != nil {
			return nil, err
		}
		if info.Cluster != nil {
			led[info.Cluster.Leader] = append(led[info.Cluster.Leader], name)
		}
	}
	return led, nil
}

func leastLeading(led map[string][]string) int {
	best := 0
	for i := range natsNodes {
		if len(led[fmt.Sprintf("nats-%d", i+1)]) < len(led[fmt.Sprintf("nats-%d", best+1)]) {
			best = i
		}
	}
	return best
}

func postgresDown(ctx context.Context, f *fleetProcs, d time.Duration) (string, error) {
	f.pg.Stop()
	what := fmt.Sprintf("postgres down %s", d)
	if err := sleepCtx(ctx, d); err != nil {
		return what, err
	}
	return what, f.pg.Start(ctx)
}

// terminateConnections ends every other connection to Postgres each
// second for d, as a failover or a pooler restart would.
func terminateConnections(ctx context.Context, f *fleetProcs, d time.Duration) (string, error) {
	end := time.Now().Add(d)
	killed := 0
	for time.Now().Before(end) {
		var n int
		err := f.db.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
			WHERE pid <> pg_backend_pid() AND backend_type = 'client backend'`).Scan(&n)
		if err != nil {
			return "", fmt.Errorf("chaos: terminate connections: %w", err)
		}
		killed += n
		if err := sleepCtx(ctx, time.Second); err != nil {
			return "", err
		}
	}
	return fmt.Sprintf("%d connections terminated over %s", killed, d), nil
}

// busiestParkedWorker is the worker that last ran the most waiting parents.
func busiestParkedWorker(ctx context.Context, f *fleetProcs) (int, error) {
	var id string
	err := f.db.QueryRow(ctx, `SELECT worker_id FROM tasks WHERE state = 'waiting' AND worker_id <> ''
		GROUP BY worker_id ORDER BY count(*) DESC LIMIT 1`).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("chaos: no waiting parent with a worker: %w", err)
	}
	for i := range workers {
		if id == fmt.Sprintf("worker-%d", i+1) {
			return i, nil
		}
	}
	return 0, fmt.Errorf("chaos: waiting parents ran on unknown worker %q", id)
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
