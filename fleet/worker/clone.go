package worker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentfleet/agentfleet/execenv"
	"github.com/agentfleet/agentfleet/execenv/sandbox"
	"github.com/agentfleet/agentfleet/internal/gitsource"
)

// cloneTimeout bounds a clone that runs in the task's sandbox (the
// clone and the checkout of its ref, each).
const cloneTimeout = 30 * time.Minute

// clone clones repo at ref into the directory name beneath root (which
// does not exist yet), for the task tree tree (the root task's id),
// within the worker's policy.repositories (package internal/gitsource):
// the source is parsed and checked again here (the dispatcher checked
// its own policy), a local one through its resolved links, a remote
// one's host resolved and refused when internal. git then runs with
// --no-local (nothing hard-linked to the source), only the allowed
// transports, no redirects, no submodules and no hooks, and the checkout
// of ref the same way.
//
// Where local tasks run under bubblewrap, an https, http or local clone
// runs in a sandbox of the task's (cloneInSandbox): as the tree's uid,
// so the files are the task's, with only the target writable, a local
// source read-only and no network, a remote one reached only through an
// egress proxy that admits its host:port alone and dials through the
// outbound guard with policy.repositories.allow_private. An ssh clone
// stays in the worker (the egress proxy speaks HTTP CONNECT, not ssh,
// and the worker's keys are there), and so does every clone when the
// sandbox is off or bubblewrap cannot run in auto mode: the worker then
// runs git with an environment without its secrets, an http(s) clone
// pinned to the addresses checked (see the gitsource package doc).
func (w *Worker) clone(ctx context.Context, repo, ref, tree, root, name string) error {
	return w.cloneAt(ctx, repo, []string{ref}, tree, root, name)
}

// cloneAt is clone checking out the first of refs that exists: a reopened
// task tries its delivered branch, then its ref (reopen.go). "" stays at
// the remote's default branch; an error is the last ref's.
func (w *Worker) cloneAt(ctx context.Context, repo string, refs []string, tree, root, name string) error {
	c, err := w.checkSource(ctx, repo)
	if err != nil {
		return err
	}
	src, from, addrs, rules := c.src, c.from, c.addrs, c.rules
	if src.Scheme != "ssh" {
		done, err := w.cloneInSandbox(ctx, src, from, refs, tree, root, name, rules)
		if done || err != nil {
			return err
		}
	}
	dir := filepath.Join(root, name)
	if err := git(ctx, "", gitsource.CloneArgs(src, from, dir, addrs)...); err != nil {
		return fmt.Errorf("cloning %s: %w", repo, err)
	}
	return checkoutFirst(refs, src.Raw, func(ref string) error {
		return git(ctx, dir, "-c", "core.hooksPath=/dev/null", "checkout", "--quiet", "--detach", ref)
	})
}

// checkedSource is a repository the worker's policy admits: from is
// what git is given (a local source's real path), addrs the addresses an
// http(s) host was checked at.
type checkedSource struct {
	src   gitsource.Source
	from  string
	addrs []netip.Addr
	rules gitsource.Rules
}

// checkSource parses repo and checks it against policy.repositories (see
// clone): a refusal is errNotAllowed; a name that does not resolve now is
// a plain error, as it may later.
func (w *Worker) checkSource(ctx context.Context, repo string) (checkedSource, error) {
	rules, err := w.cfg.Policy.Repositories.Rules()
	if err != nil { // Config.Validate refused it already
		return checkedSource{}, fmt.Errorf("%w: policy.%v", errNotAllowed, err)
	}
	src, err := gitsource.Parse(repo)
	if err == nil {
		err = rules.Check(src)
	}
	c := checkedSource{src: src, from: repo, rules: rules}
	switch {
	case err != nil:
	case src.Local:
		c.from, err = rules.CheckLocal(src)
	default:
		c.addrs, err = rules.CheckAddresses(ctx, nil, src)
	}
	if errors.Is(err, gitsource.ErrRefused) {
		return c, fmt.Errorf("%w: environment.repo: %v", errNotAllowed, err)
	}
	if err != nil {
		return c, fmt.Errorf("cloning %s: %w", repo, err)
	}
	return c, nil
}

// checkoutFirst checks out the first of refs that checkout accepts; ""
// accepts the clone as it is.
func checkoutFirst(refs []string, repo string, checkout func(ref string) error) error {
	var err error
	for _, ref := range refs {
		if ref == "" {
			return nil
		}
		if err = checkout(ref); err == nil {
			return nil
		}
		err = fmt.Errorf("%w: checking out %q of %s: %v", errBadEnvironment, ref, repo, err)
	}
	return err
}

// cloneInSandbox clones src into name beneath root, created and opened
// here, inside a sandbox of tree's (see clone); done is false when the
// sandbox is off and the worker must clone itself.
//
// The sandbox's proxy environment exempts its own loopback (NO_PROXY);
// git runs with NO_PROXY empty, so even a repository on a loopback
// address goes through the proxy, where allow_private decides.
func (w *Worker) cloneInSandbox(ctx context.Context, src gitsource.Source, from string, refs []string, tree, root, name string, rules gitsource.Rules) (done bool, err error) {
	set := sandbox.Settings{Logger: w.log.With("clone", src.Raw)}
	if src.Local {
		set.Network, set.ReadOnly = sandbox.NetworkNone, []string{from}
	} else {
		set.Network, set.AllowHosts, set.AllowPrivate = sandbox.NetworkAllowlist, []string{gitsource.ProxyHost(src)}, rules.AllowPrivate()
	}
	return w.gitSandbox(ctx, "cloning "+src.Raw, set, tree, root, name, func(env execenv.Environment) error {
		for _, safe := range gitsource.SafeDirectories(src, from) {
			if err := sandboxGit(ctx, env, []string{"config", "--global", "--add", "safe.directory", safe}); err != nil {
				return fmt.Errorf("cloning %s: %w", src.Raw, err)
			}
		}
		if err := sandboxGit(ctx, env, gitsource.SandboxCloneArgs(src, from)); err != nil {
			return fmt.Errorf("cloning %s: %w", src.Raw, err)
		}
		return checkoutFirst(refs, src.Raw, func(ref string) error {
			return sandboxGit(ctx, env, []string{"-c", "core.hooksPath=/dev/null", "checkout", "--quiet", "--detach", ref})
		})
	})
}

// sandboxGit runs git with args in env's workspace.
func sandboxGit(ctx context.Context, env execenv.Environment, args []string) error {
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	res, err := env.Exec(ctx, execenv.ExecRequest{Command: "NO_PROXY= no_proxy= exec git " + strings.Join(quoted, " ")})
	switch {
	case err != nil:
		return fmt.Errorf("git %s: %w", gitVerb(args), err)
	case res.TimedOut:
		return fmt.Errorf("git %s: timed out after %s", gitVerb(args), cloneTimeout)
	case res.Canceled:
		return fmt.Errorf("git %s: %w", gitVerb(args), context.Cause(ctx))
	case res.ExitCode != 0:
		return fmt.Errorf("git %s: exit status %d: %s", gitVerb(args), res.ExitCode, strings.TrimSpace(res.Stderr))
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
		return fmt.Errorf("git %s: %v: %s", gitVerb(args), err, strings.TrimSpace(stderr.String()))
	}
	return nil
}

// gitVerb is git's subcommand among args (the first word that is neither
// an option nor the value of a -c).
func gitVerb(args []string) string {
	for i, a := range args {
		if !strings.HasPrefix(a, "-") && (i == 0 || args[i-1] != "-c") {
			return a
		}
	}
	return args[0]
}
