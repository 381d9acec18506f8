// Package delivery hands a task's changes over: it commits the workspace's
// changes on a branch, pushes it with real git to the task's remote using
// credentials the worker holds by reference, and opens a pull request
// through a forge adapter (package forge). The worker calls Deliver after
// the task's checks passed (fleet.Delivery.EvenIfChecksFail delivers a
// failing task too).
//
// # The agent's .git is not trusted
//
// Delivery runs git on the worker, outside the task's sandbox, with the
// worker's credentials, while the workspace's .git is the agent's to
// write (hooks, a config whose core.fsmonitor, filters or sshCommand run
// programs). So no git command runs with that .git as its repository: a
// stage (a fresh bare repository of the worker's) reads the workspace's
// objects through an alternates file, its HEAD and remote-tracking refs as
// data, and its files through GIT_WORK_TREE with an index of its own; the
// commit, the fetches and the push run there, and the workspace's .git is
// left as it was.
//
// # The agent's notes stay behind
//
// What a session keeps for itself in the workspace (MEMORY.md, written by
// the memory flush and context.repo_memory in the session's working
// directory; repomemory.Files) is never committed, in any directory: the
// stage leaves those names out of its `git add` by pathspec, so the
// workspace's exclude files and git config play no part. A repository
// that tracks a file of such a name gets it delivered as the workspace's
// HEAD had it, without the agent's changes: a task cannot change a
// MEMORY.md of the repository through a delivery. Nor are subagents'
// worktrees (.agentfleet-worktrees, fleet/worker/internal/spawn) that a
// parent never merged: the same pathspec leaves them out.
//
// # Credentials
//
// A spec names credentials, never holds them: delivery.credentials.ssh_key
// is a key of the worker's ssh_keys (a push over SSH runs ssh with that key,
// IdentitiesOnly and the key's known_hosts, strict host key checking),
// delivery.credentials.token a token of the worker's delivery.tokens. A
// token is read from its file or environment variable at use; it is sent
// to git as an http.extraHeader through GIT_CONFIG_* variables (never in
// argv or a URL) and only to the hosts its configuration lists (by default
// the host of its api_url), so a spec cannot send a worker's token to a
// remote of its choosing. The token's forge and api_url say which API
// opens the request.
//
// Each credential has a scope (fleet.DeliveryScope: repos and branches),
// and so has the worker's own git access for a delivery naming none
// (Config's): CheckScope refuses a branch no pattern allows (by default
// only agentfleet/*, so never a base branch such as main), a remote (or
// pull_request.repo) outside the listed repositories. The worker checks
// it before the session starts and Deliver again before it pushes; the
// dispatcher checks the same at submission when its operator gave it the
// scopes.
//
// # Retried safely
//
// The commit (the workspace's files on top of its HEAD) is made
// deterministic: its author and committer dates are the
// task's creation time and its message ends with an "Agentfleet-Task:
// <id>" trailer, so a redelivered task that redoes the same work makes the
// same commit. Before pushing, Deliver asks the remote for the branch: at
// the commit already, nothing is pushed; at a commit of this task's own
// (found by its trailer after a fetch), the push replaces it with
// --force-with-lease; anyone else's commit makes the push fail as git
// says (non-fast-forward). Before opening a request it asks the forge for
// an open one from the branch and reuses it. So a task that pushed or
// opened its request before its worker died does neither twice.
//
// # Failures
//
// A forge that answers 429 or 5xx or cannot be reached, and a remote that
// cannot be reached, are Temporary: the worker hands the task back while
// it has deliveries left, and the next run delivers what is missing.
//
// A push the remote refuses, an unknown credentials reference or a forge
// that answers 401 or 422 fail the delivery with git's or the forge's
// message (DeliveryResult.Error); a commit that could not be pushed is
// kept as the task's artifact of kind "commit" (git format-patch, for git
// am). The worker stores the workspace's diff before delivering, so it is
// there whatever happens.
package delivery
