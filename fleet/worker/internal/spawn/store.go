package spawn

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/execenv"
	"github.com/agentfleet/agentfleet/fleet/internal/gitstore"
	"github.com/agentfleet/agentfleet/internal/beneath"
)

// storeScript is the workspace's side of the fleet git store, run by the
// task's environment (its sandbox): snapshots, bundles, loads.
//
//go:embed store.sh
var storeScript string

// Bundle files in the workspace's .git directory (store.sh).
const (
	outBundle = "agentfleet-out.bundle"
	inBundle  = "agentfleet-in.bundle"
)

// ErrNotTop is the error of a workspace that is not the top of a git work
// tree with a .git directory: its tree cannot travel.
var ErrNotTop = errors.New("the working directory is not the top of a git work tree with a .git directory")

// Workspace is a task's local workspace as the fleet git store moves it:
// its git runs in Env (the task's sandbox, as the task's own commands);
// the worker moves the bundles between Dir/.git and the store (Git),
// opened beneath Dir so no link the task made is followed.
type Workspace struct {
	Env  execenv.Environment
	Dir  string // the working directory on this host: the top of its work tree
	Git  *gitstore.Client
	Tree uuid.UUID // the root task: the store's repository
	Task uuid.UUID // the task whose workspace this is (its token's proof)
}

// script runs store.sh with mode and vars; a non-zero exit is an error
// (ErrNotTop for 3) unless ok lists it.
func (ws Workspace) script(ctx context.Context, vars map[string]string, ok ...int) (execenv.ExecResult, error) {
	res, err := runScript(ctx, ws.Env, storeScript, vars)
	switch {
	case err != nil:
		return res, err
	case res.ExitCode == 3:
		return res, ErrNotTop
	case res.ExitCode != 0:
		if slices.Contains(ok, res.ExitCode) {
			return res, nil
		}
		return res, fmt.Errorf("git failed (exit %d): %s", res.ExitCode, strings.TrimSpace(res.Stderr))
	}
	return res, nil
}

// Push snapshots the workspace's files as a commit on base ("" for
// HEAD), kept in the workspace as localRef, and stores it as the store's
// refs (BaseRef, StateRef). It returns the commit.
func (ws Workspace) Push(ctx context.Context, localRef, base, what string, refs ...string) (string, error) {
	have, err := ws.Git.Refs(ctx, ws.Tree, ws.Task)
	if err != nil {
		return "", err
	}
	haves := make([]string, 0, len(have))
	for _, id := range have {
		haves = append(haves, id)
	}
	res, err := ws.script(ctx, map[string]string{"MODE": "snap", "BASE": base, "REF": localRef, "WHAT": what,
		"HAVES": strings.Join(haves, " ")})
	if err != nil {
		return "", err
	}
	lines := strings.Fields(res.Stdout)
	if len(lines) != 2 || !gitstore.IsCommitID(lines[0]) {
		return "", fmt.Errorf("git printed %q, not a snapshot", res.Stdout)
	}
	commit := lines[0]
	if lines[1] != "bundle" {
		// Nothing new: the store has the commit, under another ref, which
		// is enough to fetch it; an empty push could not name it.
		return commit, nil
	}
	bundle, err := ws.readGitFile(outBundle)
	if err != nil {
		return "", err
	}
	for _, ref := range refs {
		if err := ws.Git.Push(ctx, ws.Tree, ws.Task, ref, bytes.NewReader(bundle)); err != nil {
			return "", err
		}
	}
	return commit, nil
}

// Load fetches commit want from the store into the workspace (thin
// against its HEAD) and applies it as store.sh's load says: "start",
// "restore" or "branch" (with key).
func (ws Workspace) Load(ctx context.Context, want, as, key string) error {
	res, err := ws.script(ctx, map[string]string{"MODE": "head"})
	if err != nil {
		return err
	}
	have := strings.TrimSpace(res.Stdout)
	if have != want {
		var b bytes.Buffer
		if err := ws.Git.Fetch(ctx, ws.Tree, ws.Task, want, have, &b); err != nil {
			return err
		}
		if err := ws.writeGitFile(inBundle, b.Bytes()); err != nil {
			return err
		}
	}
	_, err = ws.script(ctx, map[string]string{"MODE": "load", "WANT": want, "AS": as, "KEY": key})
	return err
}

// Fetched returns the commit of the work of key fetched before ("" for
// none).
func (ws Workspace) Fetched(ctx context.Context, key string) (string, error) {
	res, err := ws.script(ctx, map[string]string{"MODE": "fetched", "KEY": key})
	return strings.TrimSpace(res.Stdout), err
}

// Marked reports whether the workspace already holds the task's live
// files: a snapshot was pushed from it, or the store's loaded into it. A
// new workspace (a fresh clone on another worker) is not marked.
func (ws Workspace) Marked(ctx context.Context) (bool, error) {
	res, err := ws.script(ctx, map[string]string{"MODE": "marked"}, 1)
	return err == nil && res.ExitCode == 0, err
}

// Restore makes a new workspace the task's: its last state in the store
// (StateRef) when there is one, else base (a traveling subagent's first
// files; "" for none). A workspace already marked is left as it is. It
// returns what it loaded ("" for nothing).
func Restore(ctx context.Context, ws Workspace, base string) (string, error) {
	if marked, err := ws.Marked(ctx); err != nil || marked {
		return "", err
	}
	refs, err := ws.Git.Refs(ctx, ws.Tree, ws.Task)
	if err != nil {
		return "", err
	}
	if state := refs[gitstore.StateRef(ws.Task)]; state != "" {
		return state, ws.Load(ctx, state, "restore", "")
	}
	if base == "" {
		return "", nil
	}
	return base, ws.Load(ctx, base, "start", "")
}

// PushResult stores a traveling subagent's work as its StateRef: its files
// as one commit on base, its store_base (its own commits flattened in).
func PushResult(ctx context.Context, ws Workspace, base string) (string, error) {
	return ws.Push(ctx, "refs/agentfleet/result", base, "the work of subagent "+ws.Task.String(), gitstore.StateRef(ws.Task))
}

// gitDir opens the workspace's .git directory beneath its working
// directory: no component may be a link.
func (ws Workspace) gitDir() (*os.File, error) {
	f, err := beneath.OpenDir(ws.Dir, ".git")
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotTop, err)
	}
	return f, nil
}
