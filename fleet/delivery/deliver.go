package delivery

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/delivery/forge"
	"github.com/agentfleet/agentfleet/store"
)

// ArtifactKind is the kind of the artifact that keeps a commit whose push
// failed (git format-patch output).
const ArtifactKind = "commit"

// TrailerKey starts the trailer that marks a task's commits.
const TrailerKey = "Agentfleet-Task"

// Artifacts stores the commit of a failed push (a store.Store satisfies it).
type Artifacts interface {
	PutArtifact(ctx context.Context, p store.PutArtifactParams) (store.Artifact, error)
}

// Request is one task's delivery.
type Request struct {
	Dir     string    // the task's workspace, a git clone
	TaskID  uuid.UUID //
	Tenant  string    // the task's tenant: a credential may be limited to some (DeliveryScope.Tenants)
	Created time.Time // the task's creation time: the commit's dates
	Spec    fleet.Delivery
	Repo    string // environment.repo
	Ref     string // environment.ref
	Answer  string // the agent's final answer
	Checks  *fleet.CheckReport
	Creds   Credentials
	Config  Config
	Store   Artifacts
	// AllowPrivate are the internal addresses the forge's API may be at
	// (the worker's outbound_allow_private); the forge client goes through
	// the outbound guard (internal/outbound), which refuses others.
	AllowPrivate []netip.Prefix
}

// refs are the credential references of a spec.
type refs struct{ sshKey, token string }

// CheckCredentials reports a credentials reference of d that creds do not
// know, naming it and the worker configuration key to set.
func CheckCredentials(d fleet.Delivery, creds Credentials) error {
	if ref := d.Credentials.SSHKey; ref != "" {
		if _, ok := creds.SSHKey(ref); !ok {
			return fmt.Errorf("delivery.credentials.ssh_key %q is not configured on this worker (ssh_keys)", ref)
		}
	}
	if ref := d.Credentials.Token; ref != "" {
		t, ok := creds.Token(ref)
		if !ok {
			return fmt.Errorf("delivery.credentials.token %q is not configured on this worker (delivery.tokens)", ref)
		}
		if d.PullRequest != nil && t.Forge == "" {
			return fmt.Errorf("delivery.tokens.%s.forge is not set on this worker; a pull request needs the forge's kind", ref)
		}
	}
	return nil
}

// CheckScope refuses a delivery of task outside the scope of the
// credentials it names (of cfg's when it names none): a branch no pattern
// allows, a remote (or repo, the task's environment.repo) no repository
// entry covers. The dispatcher checks the same at submission when its
// operator listed the scopes; this is the worker's own check before
// anything is pushed.
func CheckScope(d fleet.Delivery, repo string, task uuid.UUID, tenant string, cfg Config, creds Credentials) error {
	scopes := fleet.DeliveryScopes{Default: cfg.DeliveryScope, Tokens: map[string]fleet.DeliveryScope{},
		SSHKeys: map[string]fleet.DeliveryScope{}}
	if ref := d.Credentials.Token; ref != "" {
		t, _ := creds.Token(ref)
		scopes.Tokens[ref] = t.DeliveryScope
	}
	if ref := d.Credentials.SSHKey; ref != "" {
		k, _ := creds.SSHKey(ref)
		scopes.SSHKeys[ref] = k.Scope
	}
	if fe := scopes.Check(d, repo, task, tenant); fe != nil {
		return fmt.Errorf("%s %s (this worker's delivery configuration)", strings.TrimPrefix(fe.Field, "spec."), fe.Reason)
	}
	return nil
}

// Deliver commits, pushes and opens the request; the result says how far
// it got, and its Error why it stopped. temporary reports an error worth
// another try later (see Temporary): delivering again is safe.
func Deliver(ctx context.Context, req Request) (res fleet.DeliveryResult, temporary bool) {
	res = fleet.DeliveryResult{Branch: req.Spec.BranchName(req.TaskID)}
	if err := req.deliver(ctx, &res); err != nil {
		res.Error = err.Error()
		temporary = Temporary(err)
	}
	return res, temporary
}

// Temporary reports an error another try may not meet: a forge that
// answered 429 or 5xx or could not be reached, or a git remote that could
// not be reached. A refusal (401, 403, 422, a rejected push) is not.
func Temporary(err error) bool {
	if s := forge.StatusOf(err); s != 0 {
		return s == http.StatusTooManyRequests || s >= 500
	}
	if _, ok := errors.AsType[net.Error](err); ok {
		return true
	}
	var ge *GitError
	if !errors.As(err, &ge) {
		return false
	}
	for _, s := range []string{"Could not resolve host", "Connection refused", "Connection timed out",
		"Connection reset", "The requested URL returned error: 5", "Operation timed out", "early EOF"} {
		if strings.Contains(ge.Message, s) {
			return true
		}
	}
	return false
}

func (req Request) deliver(ctx context.Context, res *fleet.DeliveryResult) error {
	if err := CheckCredentials(req.Spec, req.Creds); err != nil {
		return err
	}
	if err := CheckScope(req.Spec, req.Repo, req.TaskID, req.Tenant, req.Config, req.Creds); err != nil {
		return err
	}
	remote := req.Spec.Remote
	if remote == "" {
		remote = req.Repo
	}
	res.Remote = redact(remote)
	env, err := authEnv(remote, refs{req.Spec.Credentials.SSHKey, req.Spec.Credentials.Token}, req.Creds)
	if err != nil {
		return err
	}
	st, err := newStage(ctx, req.Dir)
	if err != nil {
		return err
	}
	defer st.remove()
	if res.Commit, err = req.commit(ctx, st, res.Branch); err != nil {
		return err
	}
	if res.Commit == "" {
		res.Skipped = "no changes to deliver"
		return nil
	}
	if err := req.push(ctx, st, remote, env, res.Branch, res.Commit); err != nil {
		req.keepCommit(ctx, st, res.Commit)
		return err
	}
	res.Pushed = true
	if req.Spec.PullRequest == nil {
		return nil
	}
	r, err := req.openRequest(ctx, st, remote, env, res.Branch)
	res.RequestURL, res.RequestNumber = r.URL, r.Number
	return err
}

// commit records the workspace's files as a commit on top of its HEAD,
// deterministically (see the package doc), and returns the commit to
// push: "" when it holds nothing the clone's remotes did not have.
func (req Request) commit(ctx context.Context, st *stage, branch string) (string, error) {
	head, bases, err := st.workspaceRefs(ctx, branch)
	if err != nil {
		return "", err
	}
	tree, err := st.snapshot(ctx, head)
	if err != nil {
		return "", err
	}
	commit := head
	if headTree, err := st.git(ctx, nil, "", "rev-parse", head+"^{tree}"); err != nil {
		return "", err
	} else if tree != headTree {
		name, email := req.author()
		date := req.Created.UTC().Format(time.RFC3339)
		env := []string{"GIT_AUTHOR_NAME=" + name, "GIT_AUTHOR_EMAIL=" + email, "GIT_AUTHOR_DATE=" + date,
			"GIT_COMMITTER_NAME=" + name, "GIT_COMMITTER_EMAIL=" + email, "GIT_COMMITTER_DATE=" + date}
		if commit, err = st.git(ctx, env, req.message(), "commit-tree", tree, "-p", head, "-F", "-"); err != nil {
			return "", err
		}
	}
	ahead, err := st.git(ctx, nil, "", append([]string{"rev-list", "--count", commit, "--not"}, bases...)...)
	if err != nil || ahead == "0" {
		return "", err
	}
	return commit, nil
}

func (req Request) author() (name, email string) {
	a := req.Spec.Author
	if a == "" {
		a = fleet.DefaultAuthor
	}
	name, email, _ = strings.Cut(a, "<")
	return strings.TrimSpace(name), strings.TrimSuffix(strings.TrimSpace(email), ">")
}

// message is the commit message with the task's trailer.
func (req Request) message() string {
	m := strings.TrimSpace(req.Spec.Message)
	if m == "" {
		m = strings.TrimSpace(req.Answer)
	}
	if m == "" {
		m = "Changes of agentfleet task " + req.TaskID.String()
	}
	return m + "\n\n" + TrailerKey + ": " + req.TaskID.String() + "\n"
}

// push pushes commit to the branch unless it is there already; a branch
// holding an earlier commit of this task is replaced (with a lease).
func (req Request) push(ctx context.Context, st *stage, remote string, env []string, branch, commit string) error {
	ref := "refs/heads/" + branch
	out, err := st.git(ctx, env, "", "ls-remote", "--", remote, ref)
	if err != nil {
		return err
	}
	args := []string{"push", "--porcelain", "--", remote, commit + ":" + ref}
	if existing, _, _ := strings.Cut(out, "\t"); existing != "" {
		if existing == commit {
			return nil // pushed by an earlier attempt
		}
		if req.ownCommit(ctx, st, remote, env, ref) {
			args = []string{"push", "--porcelain", "--force-with-lease=" + ref + ":" + existing, "--", remote, commit + ":" + ref}
		}
	}
	_, err = st.git(ctx, env, "", args...)
	if err != nil {
		return fmt.Errorf("pushing %s to %s: %w", branch, redact(remote), err)
	}
	return nil
}

// ownCommit reports whether the remote's ref holds a commit of this task.
func (req Request) ownCommit(ctx context.Context, st *stage, remote string, env []string, ref string) bool {
	if _, err := st.git(ctx, env, "", "fetch", "--quiet", "--no-tags", "--", remote, ref); err != nil {
		return false
	}
	msg, err := st.git(ctx, nil, "", "log", "-1", "--format=%B", "FETCH_HEAD")
	return err == nil && strings.Contains(msg, TrailerKey+": "+req.TaskID.String())
}

// keepCommit stores the commits that could not be pushed as the task's
// "commit" artifact.
func (req Request) keepCommit(ctx context.Context, st *stage, commit string) {
	_, bases, err := st.workspaceRefs(ctx, "")
	if err != nil {
		return
	}
	patch, err := st.git(ctx, nil, "", append([]string{"format-patch", "--stdout", commit, "--not"}, bases...)...)
	if err != nil || patch == "" || req.Store == nil {
		return
	}
	_, _ = req.Store.PutArtifact(ctx, store.PutArtifactParams{TaskID: req.TaskID, Kind: ArtifactKind,
		ContentType: "text/x-patch; charset=utf-8", Content: []byte(patch + "\n")})
}

// openRequest finds the open request from branch or opens one.
func (req Request) openRequest(ctx context.Context, st *stage, remote string, env []string, branch string) (forge.Request, error) {
	pr := req.Spec.PullRequest
	t, _ := req.Creds.Token(req.Spec.Credentials.Token)
	secret, err := t.secret()
	if err != nil {
		return forge.Request{}, fmt.Errorf("token %q: %w", req.Spec.Credentials.Token, err)
	}
	f, err := forge.New(t.Forge, t.apiURL(), secret, forge.Client(req.AllowPrivate))
	if err != nil {
		return forge.Request{}, err
	}
	repo := pr.Repo
	if repo == "" {
		if repo = repoPath(remote); repo == "" {
			return forge.Request{}, fmt.Errorf("cannot tell the forge's repository from %s: set delivery.pull_request.repo", redact(remote))
		}
	}
	if r, ok, err := f.Find(ctx, repo, branch); err != nil || ok {
		return r, err
	}
	base, err := req.base(ctx, st, remote, env)
	if err != nil {
		return forge.Request{}, err
	}
	return f.Open(ctx, repo, forge.NewRequest{Head: branch, Base: base, Title: req.title(), Body: req.body(),
		Labels: pr.Labels, Draft: pr.Draft})
}

// base is the branch the request targets: the spec's, the environment's
// ref when it is a branch of the remote, else the remote's default branch.
func (req Request) base(ctx context.Context, st *stage, remote string, env []string) (string, error) {
	if req.Spec.Base != "" {
		return req.Spec.Base, nil
	}
	if req.Ref != "" {
		out, err := st.git(ctx, env, "", "ls-remote", "--heads", "--", remote, "refs/heads/"+req.Ref)
		if err == nil && out != "" {
			return req.Ref, nil
		}
	}
	out, err := st.git(ctx, env, "", "ls-remote", "--symref", "--", remote, "HEAD")
	if err != nil {
		return "", err
	}
	for line := range strings.SplitSeq(out, "\n") {
		if rest, ok := strings.CutPrefix(line, "ref: refs/heads/"); ok {
			return strings.TrimSuffix(rest, "\tHEAD"), nil
		}
	}
	return "", fmt.Errorf("the remote %s names no default branch: set delivery.base", redact(remote))
}

// repoPath is "owner/name" from a remote URL's path.
func repoPath(remote string) string {
	var p string
	if u, err := url.Parse(remote); err == nil && u.Scheme != "" && u.Host != "" {
		p = u.Path
	} else if _, after, ok := strings.Cut(remote, ":"); ok {
		p = after
	}
	p = strings.TrimSuffix(strings.Trim(p, "/"), ".git")
	if strings.Count(p, "/") < 1 {
		return ""
	}
	return p
}

// title is the request's title: the spec's, else the answer's first line.
func (req Request) title() string {
	if t := req.Spec.PullRequest.Title; t != "" {
		return t
	}
	for line := range strings.SplitSeq(req.Answer, "\n") {
		if line = strings.TrimSpace(strings.TrimLeft(line, "# ")); line != "" {
			if len(line) > 120 {
				line = line[:117] + "..."
			}
			return line
		}
	}
	return "agentfleet task " + req.TaskID.String()
}

// body is the spec's body, then the answer, the checks and the task link.
func (req Request) body() string {
	var b strings.Builder
	if s := strings.TrimSpace(req.Spec.PullRequest.Body); s != "" {
		b.WriteString(s + "\n\n")
	}
	if s := strings.TrimSpace(req.Answer); s != "" {
		b.WriteString(s + "\n\n")
	}
	if c := req.Checks; c != nil {
		fmt.Fprintf(&b, "### Checks: %s\n\n| check | when | result | duration |\n|---|---|---|---|\n", c.Verdict)
		for _, r := range c.Runs {
			result := "passed"
			if !r.Passed {
				result = fmt.Sprintf("failed (exit %d)", r.ExitCode)
			}
			fmt.Fprintf(&b, "| `%s` | %s %d | %s | %d ms |\n", r.Name, r.Phase, r.Round, result, r.DurationMS)
		}
		b.WriteString("\n")
	}
	link := req.TaskID.String()
	if req.Config.TaskURL != "" {
		link = strings.ReplaceAll(req.Config.TaskURL, "{task_id}", link)
	}
	fmt.Fprintf(&b, "Opened by agentfleet task %s.\n", link)
	return b.String()
}
