// Package repomemory keeps a repository's notes across tasks
// (context.repo_memory): the notes file a session writes in its workspace
// (MEMORY.md, see agent's memory flush) is stored when the task ends as an
// artifact of kind "memory" named by the repository, and the newest notes
// of a repository are loaded when a later task on it starts. Off by
// default. Notes go with the task that wrote them when retention deletes
// it; every task that ends with notes stores them again, so the latest
// survive.
package repomemory

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/agent/compact"
	"github.com/agentfleet/agentfleet/execenv"
	"github.com/agentfleet/agentfleet/store"
)

// Kind is the artifact kind of a repository's notes.
const Kind = "memory"

// Files are the names of the files where a session keeps its own notes,
// in its working directory (the workspace's root, or a subagent's
// directory): the memory flush and Seed write there. They are the
// agent's, not the task's work, so delivery never commits a file of these
// names in any directory (one the repository itself tracks is delivered
// as the workspace's HEAD had it, without the agent's changes).
var Files = []string{compact.DefaultMemoryFile}

// MaxBytes bounds the notes kept for a repository.
const MaxBytes = 64 << 10

// Key names a repository's notes: its URL or path without a trailing
// slash or ".git".
func Key(repo string) string {
	return strings.TrimSuffix(strings.TrimRight(strings.TrimSpace(repo), "/"), ".git")
}

// Load returns the newest notes kept for repo, or "" when there are none.
func Load(ctx context.Context, st store.Store, repo string) (string, error) {
	a, err := st.LatestArtifact(ctx, store.LatestArtifactParams{Kind: Kind, Name: Key(repo)})
	if errors.Is(err, store.ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("repomemory: load the notes of %s: %w", Key(repo), err)
	}
	return string(a.Content), nil
}

// Seed writes notes into the workspace's notes file when it has none, and
// keeps the file out of git's view (the task's diff), so the session reads
// and extends them.
func Seed(ctx context.Context, env execenv.Environment, notes string) error {
	if notes == "" {
		return nil
	}
	if _, err := env.Stat(ctx, compact.DefaultMemoryFile); err == nil {
		return nil
	}
	_, _ = env.Exec(ctx, execenv.ExecRequest{Command: "test -d .git && printf '%s\\n' " + compact.DefaultMemoryFile + " >> .git/info/exclude"})
	return env.WriteFile(ctx, compact.DefaultMemoryFile, []byte(notes))
}

// Save stores the workspace's notes file as the task's notes on repo. A
// workspace without notes stores nothing.
func Save(ctx context.Context, st store.Store, env execenv.Environment, task uuid.UUID, repo string) error {
	b, err := env.ReadFile(ctx, compact.DefaultMemoryFile)
	if err != nil || strings.TrimSpace(string(b)) == "" {
		return nil //nolint:nilerr // no readable notes: nothing to store
	}
	if len(b) > MaxBytes {
		b = b[len(b)-MaxBytes:] // the latest notes are at the end
	}
	_, err = st.PutArtifact(ctx, store.PutArtifactParams{TaskID: task, Kind: Kind, Name: Key(repo),
		ContentType: "text/markdown; charset=utf-8", Content: b})
	return err
}

// Instructions introduce a repository's notes in the system prompt.
func Instructions(notes string) string {
	if strings.TrimSpace(notes) == "" {
		return ""
	}
	return "Notes kept by earlier tasks on this repository (they are also in " + compact.DefaultMemoryFile +
		"; add what later tasks should know):\n<memory>\n" + strings.TrimSpace(notes) + "\n</memory>"
}
