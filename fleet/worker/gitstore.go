package worker

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/internal/gitstore"
	"github.com/agentfleet/agentfleet/fleet/worker/internal/spawn"
	"github.com/agentfleet/agentfleet/internal/outbound"
	"github.com/agentfleet/agentfleet/store"
)

// GitStoreConfig is how a worker reaches the fleet git store the
// dispatcher serves (fleet/internal/gitstore): with it, the subagents of a
// local task run on any worker; without it (URL ""), on the task's own.
type GitStoreConfig struct {
	// URL is the dispatcher's base URL ("http://dispatcher:8080"). Its
	// requests go through the worker's outbound guard: a private address
	// must be in outbound_allow_private.
	URL string `mapstructure:"url"`
	// Token is the workers' credential (the dispatcher's
	// git_store.worker_token), exchanged for a token of each task tree.
	// It is redacted from every task's outputs.
	Token string `mapstructure:"token"`
}

// check says what is wrong with the store's settings.
func (c GitStoreConfig) check() error {
	switch {
	case c.URL == "" && c.Token != "":
		return errors.New("git_store.token is set but git_store.url is empty: name the dispatcher's URL, or drop the token")
	case c.URL == "":
		return nil
	case c.Token == "":
		return errors.New("git_store.url is set but git_store.token is empty: set the workers' credential (the dispatcher's git_store.worker_token)")
	}
	if _, err := outbound.ParseAllowlist("git_store.url", []string{c.URL}); err != nil {
		return err
	}
	return nil
}

// gitStoreClient is the worker's store client, made on first use.
type gitStoreClient struct {
	once sync.Once
	c    *gitstore.Client
	err  error
}

// gitStore returns the worker's store client, nil without a store. A URL
// the outbound guard cannot admit is logged once, and no store is used.
func (w *Worker) gitStore() *gitstore.Client {
	g := &w.git
	g.once.Do(func() {
		c := w.cfg.GitStore
		if c.URL == "" {
			return
		}
		allow, err := outbound.ParseAllowlist("git_store.url", []string{c.URL})
		if err != nil {
			g.err = err
			w.log.Error("the fleet git store is not used: its URL is refused", "err", err)
			return
		}
		g.c = &gitstore.Client{URL: c.URL, Credential: c.Token,
			HTTP: outbound.Client(outbound.Policy{Allow: allow, AllowPrivate: w.cfg.allowPrivate(), MaxRedirects: -1})}
	})
	return g.c
}

// storeWorkspace is the run's workspace as the fleet git store moves it,
// ok false when it cannot travel: no store, an SSH or shared environment,
// or no environment yet.
func (r *run) storeWorkspace() (spawn.Workspace, bool) {
	env := r.spec.Environment
	git := r.w.gitStore()
	if git == nil || r.env == nil || env.Kind == fleet.EnvSSH || env.Shared || r.ws == nil {
		return spawn.Workspace{}, false
	}
	return spawn.Workspace{Env: r.env, Dir: r.ws.dir, Git: git, Tree: r.tree(), Task: r.task.ID}, true
}

// restoreFromStore makes a new workspace the task's when the store has
// its files (spawn.Restore): a traveling subagent's first files
// (environment.store_base), or the last state of a task that ran on a
// worker since gone (it has children, so it pushed its files when it
// spawned them and each time it parked). A workspace this worker already
// holds for the task is left as it is. Only tasks that may have files in
// the store ask it.
func (r *run) restoreFromStore(ctx context.Context) error {
	ws, ok := r.storeWorkspace()
	if !ok {
		return nil
	}
	base := r.spec.Environment.StoreBase
	if base == "" && r.spec.Environment.Children == fleet.ChildrenLocal {
		return nil // its children never travel, so it never pushed
	}
	if base == "" {
		kids, err := r.w.st.Children(ctx, store.ChildrenParams{ParentID: r.task.ID})
		if err != nil || len(kids.Children) == 0 {
			return err
		}
	}
	loaded, err := spawn.Restore(ctx, ws, base)
	if err != nil {
		return fmt.Errorf("restoring this task's files from the fleet git store: %w", err)
	}
	if loaded != "" {
		r.log.Info("workspace restored from the fleet git store", "commit", loaded)
	}
	return nil
}

// pushResult stores a traveling subagent's work in the fleet git store
// (spawn.PushResult) before its end is written, so that its parent,
// woken by that end, finds it. A cancelled one pushes nothing: its
// parent does not merge it.
func (r *run) pushResult(ctx context.Context, to store.TaskState) error {
	base := r.spec.Environment.StoreBase
	if base == "" || to == store.TaskCancelled {
		return nil
	}
	ws, ok := r.storeWorkspace()
	if !ok {
		return nil
	}
	commit, err := spawn.PushResult(ctx, ws, base)
	if err != nil {
		return fmt.Errorf("storing the subagent's work in the fleet git store: %w", err)
	}
	r.log.Info("subagent work pushed to the fleet git store", "commit", commit)
	return nil
}
