package worker

import (
	"context"

	"github.com/agentfleet/agentfleet/fleet/internal/repomemory"
)

// loadRepoMemory seeds the workspace with the repository's notes and
// returns them as system prompt instructions ("" without repo_memory or
// notes). A store error is logged: the task runs without the notes.
func (r *run) loadRepoMemory(ctx context.Context) string {
	if !r.spec.Context.RepoMemory || r.env == nil {
		return ""
	}
	notes, err := repomemory.Load(ctx, r.w.st, r.spec.Environment.Repo)
	if err == nil {
		err = repomemory.Seed(ctx, r.env, notes)
	}
	if err != nil {
		r.log.Warn("loading the repository's notes", "err", err)
	}
	return repomemory.Instructions(notes)
}

// saveRepoMemory stores the workspace's notes for the repository.
func (r *run) saveRepoMemory(ctx context.Context) {
	if !r.spec.Context.RepoMemory || r.env == nil {
		return
	}
	if err := repomemory.Save(ctx, r.w.st, r.env, r.task.ID, r.spec.Environment.Repo); err != nil {
		r.log.Warn("storing the repository's notes", "err", err)
	}
}
