package worker

import (
	"github.com/agentfleet/agentfleet/fleet/worker/internal/spawn"
)

// newSpawner builds the run's agent.Spawner (package spawn) once its
// environment exists; the session it reads the model and effort of is set
// later, so it is read at each spawn.
func newSpawner(r *run) *spawn.Spawner {
	return spawn.New(r.w.spawnFleet(), spawn.Parent{Task: r.task, Spec: r.spec, WorkingDir: r.env.WorkingDir(), Log: r.log,
		Env:             r.env, // the git of the children's worktrees runs confined as the parent's commands
		MaxLiveChildren: r.spec.LiveChildrenLimit(r.w.cfg.MaxLiveChildren),
		Session: func() (string, string, bool) {
			sess := r.session()
			if sess == nil {
				return "", "", false
			}
			return sess.Model(), sess.ReasoningEffort(), true
		}})
}

// spawnFleet is what package spawn uses of this worker.
func (w *Worker) spawnFleet() spawn.Fleet {
	return spawn.Fleet{Store: w.st, Queue: w.q, Completer: w.ends, WorkerID: w.cfg.ID, Spawned: w.metrics.spawns.Inc,
		Git: w.gitStore()}
}
