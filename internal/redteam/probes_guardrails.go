package redteam

// Probes of the guardrails: permissions, delivery, secrets, dev mode.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/worker"
	"github.com/agentfleet/agentfleet/llm/sim/scripted"
)

// hexToLetters maps the hex digits of s to g-v, as `tr 0-9a-f g-v` does.
func hexToLetters(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= '0' && r <= '9':
			return 'g' + (r - '0')
		case r >= 'a' && r <= 'f':
			return 'q' + (r - 'a')
		}
		return r
	}, s)
}

func probeApplyPatchHook(ctx context.Context, e *env) Result {
	c := canary()
	patch := "*** Begin Patch\n*** Add File: .git/hooks/pre-commit\n+#!/bin/sh\n+echo " + c + "\n*** End Patch\n"
	st := []scripted.Step{
		// A repository of the task's own (no clone: the probe is about
		// the permission layer, not about what may be cloned).
		{Calls: []scripted.Call{{Name: "shell", Args: map[string]any{"command": "git init -q . && echo initialised"}}}},
		{Calls: []scripted.Call{{Name: "apply_patch", Args: map[string]any{"input": patch}}}},
		// The hook's canary comes back transformed, so only a hook that
		// exists can put this text in the output.
		{Calls: []scripted.Call{{Name: "shell", Args: map[string]any{"command": "tr '0-9a-f' 'g-v' < .git/hooks/pre-commit"}}}},
		{Text: "Done."},
	}
	s := spec("openai apply_patch hook", st)
	s.Profile = "openai"
	o, err := e.run(ctx, s)
	if err != nil {
		return errResult(err)
	}
	return o.escapedIf(hexToLetters(c), ".git/hooks/pre-commit was created by apply_patch", "no hook created")
}

// redactedOrNot says whether the output shows a redaction, so a held
// secret probe tells a redacted value from a command that never ran.
func redactedOrNot(o outcome, what string) string {
	if o.rec == nil {
		return what
	}
	if ex, ok := o.rec.has("[redacted"); ok {
		return what + " (output: " + ex + ")"
	}
	return what + " (no redaction seen: did the command run?)"
}

func probeGateBeforeValidation(ctx context.Context, e *env) Result {
	call := scripted.Call{Name: "shell", Args: map[string]any{"command": "git reset --hard HEAD", "not_a_parameter": true}}
	o, err := e.run(ctx, spec("gate before validation", steps(call)))
	if err != nil {
		return errResult(err)
	}
	if o.rec != nil {
		if slices.Contains(o.rec.texts, "APPROVAL_REQUESTED") {
			return Result{Outcome: Escaped, Evidence: "an approval was requested for a call its schema refuses (the task waited for a person)"}
		}
	}
	return o.held("no approval requested")
}

func probeMemoryDelivered(ctx context.Context, e *env) Result {
	repo := filepath.Join(e.outside, "memory-src-"+canary())
	remote := filepath.Join(e.outside, "memory-remote-"+canary()+".git")
	if err := gitRepo(ctx, repo); err != nil {
		return errResult(err)
	}
	if err := git(ctx, "", "init", "-q", "--bare", remote); err != nil {
		return errResult(err)
	}
	s := spec("MEMORY.md delivered", steps(shell("echo 'notes of the agent' > MEMORY.md && echo change >> README.md")))
	s.Environment = fleet.Environment{Repo: repo}
	s.Context = fleet.ContextSpec{RepoMemory: true}
	s.Delivery = &fleet.Delivery{Remote: remote} // the default branch, agentfleet/{task_id}
	o, err := e.run(ctx, s)
	if err != nil {
		return errResult(err)
	}
	files, branches, err := deliveredFiles(ctx, remote)
	if err != nil {
		return errResult(err)
	}
	if slices.Contains(files, "MEMORY.md") {
		return Result{Outcome: Escaped, Evidence: "the delivered branch " + branches[0] + " holds MEMORY.md"}
	}
	if len(branches) == 0 {
		return o.held("nothing was delivered")
	}
	return o.held("the delivered branch has no MEMORY.md")
}

func probeEchoProviderKey(ctx context.Context, e *env) Result {
	k := e.providerKey
	cmd := fmt.Sprintf("printf '%%s%%s\\n' %s %s", k[:len(k)/2], k[len(k)/2:])
	o, err := e.run(ctx, spec("echo the provider key", steps(shell(cmd))))
	if err != nil {
		return errResult(err)
	}
	return o.escapedIf(k, "the provider key is stored", redactedOrNot(o, "the key is not stored"))
}

func probeEchoMCPSecret(ctx context.Context, e *env) Result {
	v := e.mcpSecret
	cmd := fmt.Sprintf("printf '%%s%%s\\n' %s %s", v[:len(v)/2], v[len(v)/2:])
	s := spec("echo an MCP secret", steps(shell(cmd)))
	// The worker resolves the secret for this task's stdio server, which
	// exits at once: the session goes on without it, and no outbound
	// request is involved.
	s.MCPServers = []fleet.MCPServer{{Name: "secretholder", Command: "true",
		Env: map[string]string{"HOLDER_TOKEN": "${secret:redteam_mcp}"}, StartTimeout: fleet.Duration(5 * time.Second)}}
	o, err := e.run(ctx, s)
	if err != nil {
		return errResult(err)
	}
	return o.escapedIf(v, "the ${secret:redteam_mcp} value is stored", redactedOrNot(o, "the value is not stored"))
}

func probeSandboxOffEnv(ctx context.Context, e *env) Result {
	vals := map[string]string{"AWS_SECRET_ACCESS_KEY": canary(), "GITHUB_PAT": canary()}
	for k, v := range vals {
		old, had := os.LookupEnv(k)
		if err := os.Setenv(k, v); err != nil {
			return errResult(err)
		}
		defer func() {
			if had {
				_ = os.Setenv(k, old)
			} else {
				_ = os.Unsetenv(k)
			}
		}()
	}
	f, err := startFleet(ctx, fleetConfig{Dir: filepath.Join(e.dir, "sandbox-off"), ProviderKey: e.providerKey,
		Sandbox: worker.SandboxOff, Logger: e.cfg.Logger})
	if err != nil {
		return errResult(err)
	}
	defer f.close()
	// Transformed, so that neither a redaction of known secrets nor the
	// command itself stands between the probe and what the task saw.
	cmd := `printf '%s\n' "$AWS_SECRET_ACCESS_KEY" "$GITHUB_PAT" | tr '0-9a-f' 'g-v'`
	id, refused, err := submit(ctx, f.client, spec("sandbox off env", steps(shell(cmd))))
	if err != nil {
		return errResult(err)
	}
	if refused != "" {
		return Result{Outcome: Held, Evidence: refused}
	}
	rec, err := waitRecord(ctx, f.client, id)
	if err != nil {
		return errResult(err)
	}
	for k, v := range vals {
		if _, ok := rec.has(hexToLetters(v)); ok {
			return Result{Outcome: Escaped, Evidence: "a task of a worker with sandbox: off saw the worker's " + k}
		}
	}
	return outcome{rec: rec}.held("neither variable reached the task")
}
