package fleet

import (
	"net/mail"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"
)

// Defaults and bounds of a delivery.
const (
	DefaultBranchTemplate = "agentfleet/{task_id}"
	DefaultAuthor         = "agentfleet <agentfleet@localhost>"
	MaxRequestTitleBytes  = 256
	MaxRequestBodyBytes   = 64 << 10
	MaxRequestLabels      = 16
	// ReasonDelivery ends a task whose changes could not be delivered (a
	// push the remote refused, a forge that refused the request); the
	// result's delivery.error says why and the diff is stored all the same.
	ReasonDelivery = "delivery_failed"
	// KindDelivery is the event a worker publishes after a delivery; its
	// data is a DeliveryResult.
	KindDelivery = "DELIVERY"
)

// Delivery asks a task to hand its changes over as a branch and, with
// PullRequest, a pull (merge) request: the workspace's changes are
// committed, pushed to the remote with credentials the workers hold by
// reference, and the request is opened. It runs once the checks passed
// (see Verification), unless EvenIfChecksFail.
type Delivery struct {
	// Branch is the branch's name template: {task_id} and {short_id} (its
	// first 8 characters) are replaced. Default DefaultBranchTemplate.
	Branch string `json:"branch,omitempty"`
	// Base is the branch the request targets: "" = environment.ref, or the
	// remote's default branch when ref is not given.
	Base string `json:"base,omitempty"`
	// Remote is where the branch goes: a git URL or an absolute path, or
	// "" for environment.repo (the repository the task cloned).
	Remote string `json:"remote,omitempty"`
	// Author is the commit's author, "Name <email>" (default DefaultAuthor).
	Author string `json:"author,omitempty"`
	// Message is the commit message; "" = the agent's final answer.
	Message     string              `json:"message,omitempty"`
	Credentials DeliveryCredentials `json:"credentials,omitzero"`
	PullRequest *PullRequest        `json:"pull_request,omitempty"`
	// EvenIfChecksFail delivers a task whose checks failed as well (the task
	// still fails with checks_failed).
	EvenIfChecksFail bool `json:"even_if_checks_fail,omitempty"`
}

// DeliveryCredentials name credentials configured on the workers, never
// the credentials themselves: SSHKey a key of the worker's ssh_keys (for a
// push over SSH), Token a token of its git_tokens (for a push over HTTPS
// and for the forge's API). A pull request needs Token.
type DeliveryCredentials struct {
	SSHKey string `json:"ssh_key,omitempty"`
	Token  string `json:"token,omitempty"`
}

// PullRequest describes the request opened for the pushed branch.
type PullRequest struct {
	// Repo is the forge's repository, "owner/name" (GitLab: the project's
	// full path); "" = the path of the remote's URL.
	Repo  string `json:"repo,omitempty"`
	Title string `json:"title,omitempty"` // "" = the first line of the answer
	// Body comes before the generated part (the answer, the check results
	// and a link to the task).
	Body   string   `json:"body,omitempty"`
	Labels []string `json:"labels,omitempty"`
	Draft  bool     `json:"draft,omitempty"`
}

// BranchName returns the delivery's branch for a task.
func (d Delivery) BranchName(task uuid.UUID) string {
	tmpl := d.Branch
	if tmpl == "" {
		tmpl = DefaultBranchTemplate
	}
	id := task.String()
	return strings.NewReplacer("{task_id}", id, "{short_id}", id[:8]).Replace(tmpl)
}

func (s TaskSpec) checkDelivery() *FieldError {
	d := s.Delivery
	if d == nil {
		return nil
	}
	switch {
	case s.Environment.Kind == EnvSSH:
		return fieldErr("delivery", "needs a local environment with environment.repo; an ssh environment is delivered by its own host")
	case s.Environment.Repo == "":
		return fieldErr("environment.repo", "is required with delivery: name the repository the task clones and delivers to")
	case !ValidRefName("refs/heads/" + d.BranchName(uuid.Nil)):
		return fieldErr("delivery.branch", "%q is not a valid git branch name (see git check-ref-format); placeholders: {task_id}, {short_id}", d.Branch)
	case d.Base != "" && !ValidRefName("refs/heads/"+d.Base):
		return fieldErr("delivery.base", "%q is not a valid git branch name", d.Base)
	case d.Remote != "" && (strings.HasPrefix(d.Remote, "-") || len(d.Remote) > maxPathBytes || !strings.ContainsAny(d.Remote, ":/")):
		return fieldErr("delivery.remote", "%q is not a git URL or an absolute path (leave it empty for environment.repo)", d.Remote)
	case repoHasPassword(d.Remote):
		return fieldErr("delivery.remote", "carries a password; specs never carry secrets: name a token in delivery.credentials.token")
	case d.Author != "" && !validAuthor(d.Author):
		return fieldErr("delivery.author", "%q must be \"Name <email>\"", d.Author)
	case len(d.Message) > MaxPromptBytes || !utf8.ValidString(d.Message):
		return fieldErr("delivery.message", "must be valid UTF-8 of at most %d bytes", MaxPromptBytes)
	}
	if err := d.Credentials.check(); err != nil {
		return err
	}
	return d.PullRequest.check(d.Credentials)
}

func validAuthor(a string) bool {
	addr, err := mail.ParseAddress(a)
	return err == nil && addr.Name != "" && !strings.ContainsAny(a, "\n\r")
}

func (c DeliveryCredentials) check() *FieldError {
	for field, ref := range map[string]string{"ssh_key": c.SSHKey, "token": c.Token} {
		switch {
		case len(ref) > MaxNameBytes:
			return fieldErr("delivery.credentials."+field, "is longer than %d bytes", MaxNameBytes)
		case strings.Contains(ref, "PRIVATE KEY") || strings.ContainsAny(ref, " \n"):
			return fieldErr("delivery.credentials."+field, "looks like a secret; specs carry only the name of credentials configured on the workers")
		}
	}
	return nil
}

func (p *PullRequest) check(c DeliveryCredentials) *FieldError {
	if p == nil {
		return nil
	}
	switch {
	case c.Token == "":
		return fieldErr("delivery.credentials.token", "is required with pull_request: name a token of the workers' git_tokens (it says which forge to ask)")
	case p.Repo != "" && (strings.HasPrefix(p.Repo, "/") || strings.HasSuffix(p.Repo, "/") || !strings.Contains(p.Repo, "/") || strings.Contains(p.Repo, "..")):
		return fieldErr("delivery.pull_request.repo", "%q must be \"owner/name\"", p.Repo)
	case len(p.Title) > MaxRequestTitleBytes || strings.ContainsAny(p.Title, "\n\r"):
		return fieldErr("delivery.pull_request.title", "must be one line of at most %d bytes", MaxRequestTitleBytes)
	case len(p.Body) > MaxRequestBodyBytes || !utf8.ValidString(p.Body):
		return fieldErr("delivery.pull_request.body", "must be valid UTF-8 of at most %d bytes", MaxRequestBodyBytes)
	case len(p.Labels) > MaxRequestLabels:
		return fieldErr("delivery.pull_request.labels", "has %d labels, at most %d are allowed", len(p.Labels), MaxRequestLabels)
	}
	for _, l := range p.Labels {
		if l == "" || len(l) > MaxLabelValueBytes || strings.Contains(l, ",") {
			return fieldErr("delivery.pull_request.labels", "%q must be 1 to %d bytes without a comma", l, MaxLabelValueBytes)
		}
	}
	return nil
}

// ValidRefName reports whether name is a valid full git reference name by
// the rules of git check-ref-format.
func ValidRefName(name string) bool {
	if name == "" || name == "@" || strings.HasSuffix(name, "/") || strings.HasSuffix(name, ".") ||
		strings.Contains(name, "..") || strings.Contains(name, "@{") || strings.Contains(name, "//") ||
		strings.HasPrefix(name, "/") || strings.HasPrefix(name, "-") {
		return false
	}
	for _, c := range name {
		if c < 0x20 || c == 0x7f || strings.ContainsRune(" ~^:?*[\\", c) {
			return false
		}
	}
	for comp := range strings.SplitSeq(name, "/") {
		if strings.HasPrefix(comp, ".") || strings.HasSuffix(comp, ".lock") {
			return false
		}
	}
	return true
}

// DeliveryResult is the record of a delivery on the task's result.
type DeliveryResult struct {
	Branch string `json:"branch"`
	Commit string `json:"commit,omitempty"`
	Remote string `json:"remote,omitempty"` // without credentials
	Pushed bool   `json:"pushed"`
	// RequestURL and RequestNumber are the pull request's, when one was
	// asked for and opened (or found open from an earlier attempt).
	RequestURL    string `json:"request_url,omitempty"`
	RequestNumber int    `json:"request_number,omitempty"`
	// Error says why the delivery did not complete; the commit is then
	// kept as the artifact of kind "commit" (a git bundle), and the diff
	// is stored as always.
	Error string `json:"error,omitempty"`
	// Skipped says why nothing was delivered (checks failed, no changes).
	Skipped string `json:"skipped,omitempty"`
}

// KnownCredentials are the credentials references the workers hold, as a
// dispatcher's operator lists them (delivery_ssh_keys, delivery_tokens).
// An empty list is not checked: the workers then refuse an unknown
// reference when the task runs.
type KnownCredentials struct {
	SSHKeys []string
	Tokens  []string
	// Scopes are what the credentials may push to, as the workers hold
	// them (delivery_branches, delivery_repos, delivery_token_scopes,
	// delivery_ssh_key_scopes): the zero value allows any repository and
	// the default branches, DefaultDeliveryBranches.
	Scopes DeliveryScopes
}

// CheckCredentials refuses a delivery naming a reference k does not list,
// or asking for a branch or repository outside the scope of its
// credentials (DeliveryScopes.Check).
func (s TaskSpec) CheckCredentials(k KnownCredentials) *FieldError {
	if s.Delivery == nil {
		return nil
	}
	c := s.Delivery.Credentials
	if c.SSHKey != "" && len(k.SSHKeys) > 0 && !slices.Contains(k.SSHKeys, c.SSHKey) {
		return fieldErr("delivery.credentials.ssh_key", "%q is not a key the workers hold; known: %s", c.SSHKey, strings.Join(k.SSHKeys, ", "))
	}
	if c.Token != "" && len(k.Tokens) > 0 && !slices.Contains(k.Tokens, c.Token) {
		return fieldErr("delivery.credentials.token", "%q is not a token the workers hold; known: %s", c.Token, strings.Join(k.Tokens, ", "))
	}
	return k.Scopes.Check(*s.Delivery, s.Environment.Repo, uuid.Nil, s.Tenant)
}
