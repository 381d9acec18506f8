package worker

import (
	"context"

	"github.com/agentfleet/agentfleet/agent/compact"
	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/internal/repomemory"
)

// contextConfig maps a task's context spec onto the session: the
// provider's context_window bounds the task's window (a task may only
// narrow what the operator set).
func contextConfig(c fleet.ContextSpec, pc ProviderConfig) compact.Config {
	window := c.Window
	if pc.ContextWindow > 0 && (window == 0 || window > pc.ContextWindow) {
		window = pc.ContextWindow
	}
	return compact.Config{Window: window, Reserve: c.Reserve, KeepRecentRounds: c.KeepRecentRounds,
		SummaryModel: c.SummaryModel, Disabled: c.Disabled, MemoryFlush: c.MemoryFlush || c.RepoMemory}
}

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
