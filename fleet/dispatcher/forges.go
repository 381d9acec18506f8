package dispatcher

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/api"
	"github.com/agentfleet/agentfleet/internal/identity"
	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/store"
)

// Forge webhooks: POST /v1/forges/{name}/events takes the webhooks of a
// forge the operator configured (Config.Forges[name]), GitHub- or
// Gitea-shaped. It is not behind the bearer token: each request is
// authenticated by its HMAC-SHA256 signature (GitHub's
// X-Hub-Signature-256 "sha256=<hex>", Gitea's X-Gitea-Signature "<hex>")
// with the forge's secret, read at each request from the file or
// environment variable the configuration names (never from configuration
// text). A verified event acts as the principal "webhook:<name>", a
// submitter of the forge's tenant only, and is recorded in the audit log.
//
// The events acted on (others are answered 202 and ignored):
//   - an issue labelled with the forge's label (default "agentfleet") is a
//     new task: the forge's spec template with the issue's title and body
//     as the prompt, the repository's clone URL as environment.repo, and
//     a pull request body that references the issue; the issue is the
//     idempotency key, so a redelivered webhook, or a label added again,
//     submits once;
//   - a comment starting with the forge's mention (default "/agentfleet")
//     on a pull request a task of this forge opened is a follow-up of that
//     task (it reopens it when it ended, Dispatcher.Reopen); on an issue,
//     a new task as for a label.
//
//   - a review with changes requested, a review comment (with its file and
//     line) or a failed check run (its name, title and summary) on such a
//     pull request is a follow-up of its task too, bounded by its
//     limits.max_followups.
//
// Not yet mapped: commit statuses, the base branch moving, the pull
// request merged or closed (issue 34). A pull request's task is found
// by its result (delivery.request_number), so feedback that comes while
// a reopened task runs again (its result cleared) is ignored.

// forgeEventsRoute is served beside /v1/, outside the bearer token.
const forgeEventsRoute = "POST /v1/forges/{name}/events"

// ForgeConfig is one forge that may send webhooks.
type ForgeConfig struct {
	// Kind is "github" or "gitea" (Forgejo sends Gitea's).
	Kind string `json:"kind"`
	// SecretFile or SecretEnv names where the webhook secret is (a file
	// whose first line it is, or an environment variable).
	SecretFile string `json:"secret_file,omitempty"`
	SecretEnv  string `json:"secret_env,omitempty"`
	// Tenant is where the forge's tasks go (default "default").
	Tenant string `json:"tenant,omitempty"`
	// Label marks an issue for the fleet (default "agentfleet"); Mention
	// starts a comment addressed to it (default "/agentfleet").
	Label   string `json:"label,omitempty"`
	Mention string `json:"mention,omitempty"`
	// Spec is the template of the tasks it submits (profile, checks,
	// delivery with its credentials references...); the prompt and
	// environment.repo are the event's.
	Spec fleet.TaskSpec `json:"spec"`
}

func (f ForgeConfig) secret() ([]byte, error) {
	switch {
	case f.SecretFile != "":
		b, err := os.ReadFile(f.SecretFile)
		if err != nil {
			return nil, err
		}
		line, _, _ := strings.Cut(string(b), "\n")
		return []byte(strings.TrimSpace(line)), nil
	case f.SecretEnv != "" && os.Getenv(f.SecretEnv) != "":
		return []byte(os.Getenv(f.SecretEnv)), nil
	}
	return nil, errors.New("the forge has no webhook secret: set secret_file or secret_env (a variable that is set)")
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// maxForgeEvent bounds a webhook's body.
const maxForgeEvent = 1 << 20

// forgeEvent is the part of a GitHub- or Gitea-shaped payload read here.
type forgeEvent struct {
	Action string `json:"action"`
	Label  *struct {
		Name string `json:"name"`
	} `json:"label"`
	Issue *struct {
		Number      int             `json:"number"`
		Title       string          `json:"title"`
		Body        string          `json:"body"`
		PullRequest json.RawMessage `json:"pull_request"`
		Labels      []struct {
			Name string `json:"name"`
		} `json:"labels"`
	} `json:"issue"`
	Comment *struct {
		Body string `json:"body"`
		Path string `json:"path"`
		Line int    `json:"line"`
	} `json:"comment"`
	PullRequest *struct {
		Number int `json:"number"`
	} `json:"pull_request"`
	Review *struct {
		State string `json:"state"`
		Body  string `json:"body"`
	} `json:"review"`
	CheckRun *struct {
		Name       string `json:"name"`
		Conclusion string `json:"conclusion"`
		Output     struct {
			Title   string `json:"title"`
			Summary string `json:"summary"`
		} `json:"output"`
		PullRequests []struct {
			Number int `json:"number"`
		} `json:"pull_requests"`
	} `json:"check_run"`
	Repository struct {
		FullName string `json:"full_name"`
		CloneURL string `json:"clone_url"`
	} `json:"repository"`
}

// forgeEvents serves POST /v1/forges/{name}/events.
func (a *handlers) forgeEvents(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	cfg, ok := a.svc.forge(name)
	if !ok {
		writeErr(w, http.StatusNotFound, api.ErrorDetail{Code: api.CodeNotFound, Message: fmt.Sprintf("no forge %q is configured (dispatcher forges)", name)})
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxForgeEvent+1))
	if err != nil || len(body) > maxForgeEvent {
		writeErr(w, http.StatusRequestEntityTooLarge, api.ErrorDetail{Code: api.CodeTooLarge, Message: fmt.Sprintf("a webhook body is at most %d bytes", maxForgeEvent)})
		return
	}
	secret, err := cfg.secret()
	if err != nil {
		a.log.Error("forge webhook refused", "forge", name, "err", err)
		writeErr(w, http.StatusServiceUnavailable, api.ErrorDetail{Code: api.CodeUnavailable, Message: "the forge's webhook secret is not configured on the dispatcher"})
		return
	}
	kind, delivery, sig := forgeHeaders(cfg.Kind, r.Header)
	if !validSignature(secret, body, sig) {
		writeErr(w, http.StatusUnauthorized, api.ErrorDetail{Code: api.CodeUnauthorized, Message: "the webhook's signature does not match the forge's secret"})
		return
	}
	var ev forgeEvent
	if err := json.Unmarshal(body, &ev); err != nil {
		badRequestf(w, "body", "is not a JSON event: %v", err)
		return
	}
	p := identity.Principal{ID: "webhook:" + name, Name: "forge " + name, DefaultTenant: orDefault(cfg.Tenant, fleet.DefaultTenant)}
	p.Grants = map[string]identity.Role{p.DefaultTenant: identity.Submitter}
	ctx := identity.WithPrincipal(r.Context(), p)
	action, target, status, err := a.svc.forgeAct(ctx, name, cfg, kind, delivery, ev)
	a.recordForge(ctx, p, action, target, status, err)
	switch {
	case err != nil:
		a.fail(w, r, err)
	case action == "":
		writeJSON(w, http.StatusAccepted, map[string]any{"ok": true, "ignored": true})
	default:
		writeJSON(w, status, map[string]any{"ok": true, "action": action, "task_id": target})
	}
}

// forgeHeaders reads the event kind, delivery id and signature of a kind
// of forge.
func forgeHeaders(kind string, h http.Header) (event, delivery, sig string) {
	if kind == "gitea" {
		return h.Get("X-Gitea-Event"), h.Get("X-Gitea-Delivery"), h.Get("X-Gitea-Signature")
	}
	return h.Get("X-GitHub-Event"), h.Get("X-GitHub-Delivery"), strings.TrimPrefix(h.Get("X-Hub-Signature-256"), "sha256=")
}

// validSignature checks sig, the hex HMAC-SHA256 of body with secret, in
// constant time.
func validSignature(secret, body []byte, sig string) bool {
	got, err := hex.DecodeString(sig)
	if err != nil || len(got) != sha256.Size {
		return false
	}
	m := hmac.New(sha256.New, secret)
	m.Write(body)
	return hmac.Equal(got, m.Sum(nil))
}

// recordForge writes the audit entry of an event that acted (or failed).
func (a *handlers) recordForge(ctx context.Context, p identity.Principal, action, target string, status int, err error) {
	if a.principals == nil || (action == "" && err == nil) {
		return
	}
	e := store.AuditEntry{Principal: p.ID, Tenant: p.DefaultTenant, Action: orDefault(action, "forge.event"), Target: target, Status: status}
	if err != nil {
		e.Status, e.Error = http.StatusInternalServerError, err.Error()
	}
	if _, aerr := a.principals.AppendAudit(context.WithoutCancel(ctx), e); aerr != nil {
		a.log.Warn("recording a forge event in the audit log", "err", aerr)
	}
}

// forgeAct maps one verified event to its action: "task.submit" (a new
// task), "task.follow_up" (of the task that opened the pull request) or
// "" (ignored).
func (d *Dispatcher) forgeAct(ctx context.Context, name string, cfg ForgeConfig, kind, delivery string, ev forgeEvent) (action, target string, status int, err error) {
	if pr, text := pullFeedback(kind, ev); pr != 0 {
		return d.followPull(ctx, name, ev.Repository.FullName, pr, text)
	}
	if ev.Issue == nil {
		return "", "", 0, nil
	}
	issue := ev.Issue
	switch {
	case labelled(kind, ev, orDefault(cfg.Label, "agentfleet")):
		// One task per labelled issue, however often its labels change.
		key := fmt.Sprintf("issue:%s#%d", ev.Repository.FullName, issue.Number)
		return d.forgeTask(ctx, name, cfg, key, ev, issue.Title+"\n\n"+issue.Body)
	case kind == "issue_comment" && ev.Action == "created" && ev.Comment != nil:
		text, ok := strings.CutPrefix(strings.TrimSpace(ev.Comment.Body), orDefault(cfg.Mention, "/agentfleet"))
		if !ok || strings.TrimSpace(text) == "" {
			return "", "", 0, nil
		}
		if len(issue.PullRequest) == 0 || string(issue.PullRequest) == "null" {
			return d.forgeTask(ctx, name, cfg, delivery, ev, issue.Title+"\n\n"+issue.Body+"\n\n"+strings.TrimSpace(text))
		}
		return d.followPull(ctx, name, ev.Repository.FullName, issue.Number, strings.TrimSpace(text))
	}
	return "", "", 0, nil
}

// labelled reports whether ev labels an issue with label: GitHub's
// issues "labeled" with its label, Gitea's "label_updated" (sent as an
// issues event) with the issue's labels.
func labelled(kind string, ev forgeEvent, label string) bool {
	switch {
	case kind == "issues" && ev.Action == "labeled":
		return ev.Label != nil && ev.Label.Name == label
	case (kind == "issues" || kind == "issue_label") && ev.Action == "label_updated":
		for _, l := range ev.Issue.Labels {
			if l.Name == label {
				return true
			}
		}
	}
	return false
}

// pullFeedback is the pull request number and the follow-up text of a
// review with changes requested, a review comment (with its file and
// line) or a failed check run; 0 for any other event.
func pullFeedback(kind string, ev forgeEvent) (int, string) {
	switch {
	case kind == "pull_request_review" && ev.PullRequest != nil && ev.Review != nil &&
		strings.EqualFold(ev.Review.State, "changes_requested"):
		return ev.PullRequest.Number, "A reviewer requested changes to your pull request:\n\n" + ev.Review.Body
	case kind == "pull_request_review_comment" && ev.Action == "created" && ev.PullRequest != nil && ev.Comment != nil:
		return ev.PullRequest.Number, fmt.Sprintf("A reviewer commented on %s line %d of your pull request:\n\n%s", ev.Comment.Path, ev.Comment.Line, ev.Comment.Body)
	case kind == "check_run" && ev.Action == "completed" && ev.CheckRun != nil && len(ev.CheckRun.PullRequests) > 0 &&
		(ev.CheckRun.Conclusion == "failure" || ev.CheckRun.Conclusion == "timed_out"):
		c := ev.CheckRun
		return c.PullRequests[0].Number, fmt.Sprintf("The check %q failed on your pull request (%s): %s\n\n%s\n\nFix it and make the checks pass.", c.Name, c.Conclusion, c.Output.Title, c.Output.Summary)
	}
	return 0, ""
}

// followPull gives text to the task of forge name that opened pull
// request number of repo: a follow-up of its running session, or a
// reopening when it ended (Dispatcher.Reopen). No such task: ignored.
func (d *Dispatcher) followPull(ctx context.Context, name, repo string, number int, text string) (string, string, int, error) {
	t, err := d.taskOfPull(ctx, name, repo, number)
	if err != nil || t.ID == uuid.Nil {
		return "", "", 0, err
	}
	if t.State == store.TaskSucceeded || t.State == store.TaskFailed {
		_, err = d.Reopen(ctx, t, text)
	} else {
		_, err = d.Control(ctx, t.ID, queue.ControlRequest{Op: queue.OpFollowUp, Message: text})
	}
	return "task.follow_up", t.ID.String(), http.StatusAccepted, err
}

// forgeTask submits the forge's template for an issue, under the
// delivery's idempotency key.
func (d *Dispatcher) forgeTask(ctx context.Context, name string, cfg ForgeConfig, delivery string, ev forgeEvent, prompt string) (string, string, int, error) {
	spec := cfg.Spec
	spec.Prompt = prompt
	spec.Tenant = orDefault(cfg.Tenant, fleet.DefaultTenant)
	spec.Environment.Repo = orDefault(spec.Environment.Repo, ev.Repository.CloneURL)
	if delivery != "" {
		spec.IdempotencyKey = "forge:" + name + ":" + delivery
	}
	spec.Labels = map[string]string{"forge": name, "forge_repo": ev.Repository.FullName, "forge_issue": strconv.Itoa(ev.Issue.Number)}
	if spec.Delivery != nil && spec.Delivery.PullRequest != nil {
		d2, pr := *spec.Delivery, *spec.Delivery.PullRequest
		pr.Body = strings.TrimSpace(pr.Body + fmt.Sprintf("\n\nFixes #%d", ev.Issue.Number))
		d2.PullRequest = &pr
		spec.Delivery = &d2
	}
	subs, err := d.Submit(ctx, []fleet.TaskSpec{spec})
	if err != nil {
		return "task.submit", "", 0, err
	}
	status := http.StatusCreated
	if subs[0].Existing {
		status = http.StatusOK
	}
	return "task.submit", subs[0].Task.ID.String(), status, nil
}

// taskOfPull finds the task of forge name that opened pull request number
// of repo (its result's delivery); a zero task when none did.
func (d *Dispatcher) taskOfPull(ctx context.Context, name, repo string, number int) (store.Task, error) {
	page, err := d.store.ListTasks(ctx, store.ListTasksParams{Labels: map[string]string{"forge": name, "forge_repo": repo}, Limit: 1000})
	if err != nil {
		return store.Task{}, err
	}
	for _, t := range page.Tasks {
		var res fleet.TaskResult
		if json.Unmarshal(t.Result, &res) == nil && res.Delivery != nil && res.Delivery.RequestNumber == number {
			return t, nil
		}
	}
	return store.Task{}, nil
}

// forge returns the configuration of forge name.
func (d *Dispatcher) forge(name string) (ForgeConfig, bool) {
	f, ok := d.cfg.Forges[name]
	return f, ok
}
