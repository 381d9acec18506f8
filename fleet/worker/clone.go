package worker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os/exec"
	"strings"

	"github.com/agentfleet/agentfleet/internal/gitsource"
)

// clone clones repo at ref into dir (which does not exist yet), within
// the worker's policy.repositories (package internal/gitsource): the
// source is parsed and checked again here (the dispatcher checked its own
// policy), a local one through its resolved links, a remote one's host
// resolved and refused when internal; git then runs with --no-local
// (nothing hard-linked to the source), only the allowed transports, no
// redirects, and an environment without the worker's secrets.
//
// The clone runs in the worker, outside the task's sandbox; an http(s)
// clone is pinned to the addresses checked, an ssh one resolves its host
// again itself (see the gitsource package doc).
func (w *Worker) clone(ctx context.Context, repo, ref, dir string) error {
	rules, err := w.cfg.Policy.Repositories.Rules()
	if err != nil { // Config.Validate refused it already
		return fmt.Errorf("%w: policy.%v", errNotAllowed, err)
	}
	src, err := gitsource.Parse(repo)
	if err == nil {
		err = rules.Check(src)
	}
	from := repo
	var addrs []netip.Addr
	switch {
	case err != nil:
	case src.Local:
		from, err = rules.CheckLocal(src)
	default:
		addrs, err = rules.CheckAddresses(ctx, nil, src)
	}
	if errors.Is(err, gitsource.ErrRefused) {
		return fmt.Errorf("%w: environment.repo: %v", errNotAllowed, err)
	}
	if err != nil {
		return fmt.Errorf("cloning %s: %w", repo, err) // a name that does not resolve now may later
	}
	if err := git(ctx, "", gitsource.CloneArgs(src, from, dir, addrs)...); err != nil {
		return fmt.Errorf("cloning %s: %w", repo, err)
	}
	if ref != "" {
		if err := git(ctx, dir, "-c", "core.hooksPath=/dev/null", "checkout", "--quiet", "--detach", ref); err != nil {
			return fmt.Errorf("%w: checking out %q of %s: %v", errBadEnvironment, ref, repo, err)
		}
	}
	return nil
}

// git runs git in dir with the clone's environment (gitsource.CloneEnv).
func git(ctx context.Context, dir string, args ...string) error {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Env = gitsource.CloneEnv()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		verb := args[0]
		for i, a := range args {
			if !strings.HasPrefix(a, "-") && (i == 0 || args[i-1] != "-c") {
				verb = a
				break
			}
		}
		return fmt.Errorf("git %s: %v: %s", verb, err, strings.TrimSpace(stderr.String()))
	}
	return nil
}
