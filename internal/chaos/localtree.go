package chaos

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/llm/sim/scripted"
)

// The local-tree scenario: parents in local workspaces (cloned, not
// shared) whose children run on any worker through the fleet git store
// the dispatcher serves (fleet/dispatcher gitstore.go). The worker holding
// the most parked parents is killed for good and its workspaces deleted,
// while their children run; the parents' resumes move to the shared queue
// and another worker restores each parent's files from the store. A
// parent's check fails (and the task with it: no repair round) unless its
// own uncommitted edit and both children's files are in its tree, so a
// lost file is lost work.

// Secrets of the run's fleet git store (loopback only).
const (
	gitStoreKey    = "chaos-git-store-signing-key" // a throwaway fleet's key, on loopback
	gitStoreWorker = "chaos-git-store-worker"
)

// gitStoreEnv configures the dispatcher's fleet git store.
func (f *fleetProcs) gitStoreEnv() []string {
	return []string{"AGENTFLEET_GIT_STORE_DIR=" + filepath.Join(f.dir, "gitstore"),
		"AGENTFLEET_GIT_STORE_KEY=" + gitStoreKey, "AGENTFLEET_GIT_STORE_WORKER_TOKEN=" + gitStoreWorker}
}

// gitStoreWorkerConfig adds the store to worker configuration cfg: the
// dispatcher's URL, on loopback, which the outbound guard must admit.
func (f *fleetProcs) gitStoreWorkerConfig(cfg map[string]any) {
	cfg["git_store"] = map[string]any{"url": f.apiURL, "token": gitStoreWorker}
	cfg["outbound_allow_private"] = []string{"127.0.0.1"}
}

// upstream returns the repository the local trees clone, made once.
func (f *fleetProcs) upstream(ctx context.Context) (string, error) {
	dir := filepath.Join(f.dir, "upstream")
	if _, err := os.Stat(filepath.Join(dir, ".git")); err == nil {
		return dir, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "README"), []byte("chaos upstream\n"), 0o644); err != nil {
		return "", err
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "."},
		{"-c", "user.name=chaos", "-c", "user.email=chaos@localhost", "commit", "-qm", "init"}} {
		if out, err := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			return "", fmt.Errorf("chaos: git %s: %v: %s", args[0], err, out)
		}
	}
	return dir, nil
}

// localTreeSpec is a parent in a fresh clone of repo: it edits a file
// without committing, spawns two children that each write a file, parks,
// and answers; its check wants the three files.
func localTreeSpec(f *fleetProcs, repo, scenario string, i int) fleet.TaskSpec {
	tag := fmt.Sprintf("%s-%d", scenario, i)
	var spawns, waits []scripted.Call
	check := []string{"grep -qx " + tag + " parent.txt"}
	for c := range 2 {
		child := fmt.Sprintf("%s-child-%d", tag, c)
		cmd := fmt.Sprintf("sleep %g && grep -qx %s parent.txt && echo %s > %s.txt && echo %s", f.cfg.Sleep.Seconds(), tag, child, child, child)
		spawns = append(spawns, scripted.Spawn("chaos child "+child,
			scripted.Step{Calls: []scripted.Call{scripted.Shell(cmd)}}, scripted.Step{Text: "done: {{results}}"}))
		waits = append(waits, scripted.Call{Name: "wait", Args: map[string]any{"agent_id": fmt.Sprintf("{{agent:%d}}", c)}})
		check = append(check, fmt.Sprintf("grep -qx %s %s.txt", child, child))
	}
	steps := []scripted.Step{{Calls: []scripted.Call{scripted.Shell("echo " + tag + " > parent.txt")}},
		{Calls: spawns}, {Calls: waits}, {Text: "children said: {{results}}"}}
	noRepair := 0
	spec := fleet.TaskSpec{Prompt: scripted.Prompt("chaos local parent "+tag, steps...), Profile: "anthropic",
		Labels:      map[string]string{"chaos": scenario},
		Environment: fleet.Environment{Kind: fleet.EnvLocal, Repo: repo}}
	spec.Checks = []fleet.Check{{Name: "nothing-lost", Command: strings.Join(check, " && ")}}
	spec.MaxRepairRounds = &noRepair
	return spec
}

// killParkedWorkerAndDisk kills the worker holding the most parked
// parents for good (heal restarts it before the next scenario) and
// deletes its workspaces: what it held is only in the fleet git store.
func killParkedWorkerAndDisk(ctx context.Context, f *fleetProcs) (string, error) {
	i, err := busiestParkedWorker(ctx, f)
	if err != nil {
		return "", err
	}
	f.workers[i].kill()
	if err := removeWhenQuiet(ctx, func() error { return os.RemoveAll(f.workspaceRoot(i)) }); err != nil {
		return "", err
	}
	return fmt.Sprintf("worker-%d (holding parked local parents) SIGKILL, its workspaces deleted, not restarted", i+1), nil
}

// removeWhenQuiet calls remove until it succeeds, every 100 ms for at most
// 30 s. A killed worker's sandboxed processes (a clone under way) die with
// it but a moment after, and until then may write into the directory being
// removed, which fails the removal with "directory not empty".
func removeWhenQuiet(ctx context.Context, remove func() error) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		err := remove()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("chaos: removing a killed worker's workspaces: %w", err)
		case <-tick.C:
		}
	}
}

// workspaceRoot is worker i's workspace_root.
func (f *fleetProcs) workspaceRoot(i int) string {
	return filepath.Join(f.dir, fmt.Sprintf("workspaces-%d", i+1))
}
