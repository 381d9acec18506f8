package dispatcher

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strings"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/api"
	"github.com/agentfleet/agentfleet/fleet/delivery/forge"
	"github.com/agentfleet/agentfleet/internal/identity"
	"github.com/agentfleet/agentfleet/store"
)

// Forge webhooks: POST /v1/forges/{name}/events takes the webhooks of a
// forge the operator configured (Config.Forges[name]): GitHub, Gitea (and
// Forgejo, which sends Gitea's) or GitLab. It is not behind the bearer
// token: each request is authenticated with the forge's secret, read at
// each request from the file or environment variable the configuration
// names (never from configuration text): GitHub's X-Hub-Signature-256
// "sha256=<hex>" and Gitea's X-Gitea-Signature "<hex>" are HMAC-SHA256
// of the body, GitLab's X-Gitlab-Token is the secret itself (compared in
// constant time). A verified event acts as the principal
// "webhook:<name>", a submitter of the forge's tenant only, and what it
// does is recorded in the audit log.
//
// The events acted on (others are answered 202 and ignored), the same for
// every kind of forge (forges_parse.go maps each one's names):
//   - an issue labelled with the forge's label (default "agentfleet") is a
//     new task: the forge's spec template with the issue's title and body
//     as the prompt, the repository's clone URL as environment.repo, and
//     a pull request body that references the issue; the issue is the
//     idempotency key, so a redelivered webhook, or a label added again,
//     submits once;
//   - a comment starting with the forge's mention (default "/agentfleet")
//     on a pull request a task of this forge opened is a follow-up of that
//     task (it reopens it when it ended, Dispatcher.Reopen); on an issue,
//     a new task as for a label;
//   - a review with changes requested, or review comments, on such a pull
//     request: a follow-up with the comments, each with its file and line
//     (read through the forge's API when the payload has none; GitHub
//     sends one event per line comment besides the review's, and with an
//     API token the review's brings them all in one follow-up);
//   - a failed commit status, check run or pipeline on the pull request's
//     head commit: a follow-up with the failure's name, description and
//     the end of its log (read through the forge's API), at most
//     max_ci_repairs (default 3) per task; a result for an older commit
//     is ignored;
//   - a push to the base branch of such a pull request: the dispatcher
//     reads the pull request until the forge has checked it again
//     (forges_follow.go), and one that now conflicts gets a follow-up that
//     rebases the branch onto the base and re-runs the checks (GitLab's
//     merge request event saying it conflicts does the same);
//   - the pull request merged or closed: the task's outcome is recorded
//     ("merged" or "closed", TaskView.Outcome), and it takes no more
//     follow-ups (Reopen answers ErrTaskConcluded).
//
// Each follow-up counts against the task's limits.max_followups, like one
// through the API. A delivery id (X-GitHub-Delivery, X-Gitea-Delivery,
// GitLab's Idempotency-Key or X-Gitlab-Event-UUID) acts once: a new task
// is keyed by it (or by its issue), a follow-up is remembered on its task
// (the artifact kind "forge_event", named "<cause>:<delivery>").
//
// Who may trigger: the forge's triggers rule applies to the events people
// cause (a label, a comment, a review); CI results, pushes and merges are
// facts about the pull request and always act. triggers.users allows
// logins by name, triggers.collaborators asks the forge's API whether the
// sender may write to the repository; with neither set, anyone who can
// label or comment on the repository can start work, which New logs as a
// warning. A refused sender's event is answered 202 and audited as
// "forge.refused".
//
// A pull request's task is found by its result (delivery.request_number,
// delivery.commit), so feedback that comes while a reopened task runs
// again (its result cleared) is ignored: the forge's next event, or a
// comment, brings it again.

// forgeEventsRoute is served beside /v1/, outside the bearer token.
const forgeEventsRoute = "POST /v1/forges/{name}/events"

// ForgeConfig is one forge that may send webhooks. Its JSON names are the
// keys of the dispatcher's configuration file (forges.<name>.<key>).
type ForgeConfig struct {
	// Kind is "github", "gitea", "forgejo" or "gitlab".
	Kind string `json:"kind"`
	// SecretFile or SecretEnv names where the webhook secret is (a file
	// whose first line it is, or an environment variable).
	SecretFile string `json:"secret_file,omitempty"`
	SecretEnv  string `json:"secret_env,omitempty"`
	// APIURL is the forge's API root (forge.DefaultAPIURL for GitHub and
	// GitLab); TokenFile or TokenEnv its API token, read at each use. The
	// API reads logs, review comments, pull request states and
	// collaborators; without a token those parts are left out (a CI
	// follow-up without its log, a Gitea review without its comments, no
	// conflict checks, no collaborators rule).
	APIURL    string `json:"api_url,omitempty"`
	TokenFile string `json:"token_file,omitempty"`
	TokenEnv  string `json:"token_env,omitempty"`
	// Tenant is where the forge's tasks go (default "default").
	Tenant string `json:"tenant,omitempty"`
	// Label marks an issue for the fleet (default "agentfleet"); Mention
	// starts a comment addressed to it (default "/agentfleet").
	Label   string `json:"label,omitempty"`
	Mention string `json:"mention,omitempty"`
	// Prompt is the text/template of a new task's prompt (default
	// DefaultForgePrompt) over a ForgePrompt: the issue's title, body and
	// comments (read through the forge's API when it has a token), and
	// the request of a comment that addressed the fleet.
	Prompt string `json:"prompt,omitempty"`
	// Triggers says who may start work or follow-ups.
	Triggers ForgeTriggers `json:"triggers,omitzero"`
	// MaxCIRepairs bounds the follow-ups a task takes for failed CI
	// (default DefaultMaxCIRepairs; negative: none).
	MaxCIRepairs int `json:"max_ci_repairs,omitempty"`
	// Spec is the template of the tasks it submits (profile, checks,
	// delivery with its credentials references...); the prompt and
	// environment.repo are the event's.
	Spec fleet.TaskSpec `json:"spec"`
}

// ForgeTriggers is who may trigger the fleet from a forge: either rule
// admits a sender; neither set admits everyone.
type ForgeTriggers struct {
	// Users are logins allowed by name.
	Users []string `json:"users,omitempty"`
	// Collaborators admits whoever may write to the repository, as the
	// forge's API says (needs the forge's API token).
	Collaborators bool `json:"collaborators,omitempty"`
}

// DefaultMaxCIRepairs is a forge's max_ci_repairs when unset.
const DefaultMaxCIRepairs = 3

func (f ForgeConfig) label() string   { return orDefault(f.Label, "agentfleet") }
func (f ForgeConfig) mention() string { return orDefault(f.Mention, "/agentfleet") }
func (f ForgeConfig) tenant() string  { return orDefault(f.Tenant, fleet.DefaultTenant) }

func (f ForgeConfig) maxCIRepairs() int {
	if f.MaxCIRepairs == 0 {
		return DefaultMaxCIRepairs
	}
	return max(f.MaxCIRepairs, 0)
}

// forgeKinds are the kinds a forge's webhooks may be.
var forgeKinds = []string{forge.KindGitHub, forge.KindGitea, forge.KindForgejo, forge.KindGitLab}

// validateForges checks each forge's settings, naming the key.
func validateForges(forges map[string]ForgeConfig) []error {
	var errs []error
	for name, f := range forges {
		if !slices.Contains(forgeKinds, f.Kind) {
			errs = append(errs, fmt.Errorf("forges.%s.kind %q must be one of %s", name, f.Kind, strings.Join(forgeKinds, ", ")))
		}
		if f.SecretFile == "" && f.SecretEnv == "" {
			errs = append(errs, fmt.Errorf("forges.%s needs secret_file or secret_env: its webhooks are verified with that secret", name))
		}
		if _, err := f.promptTemplate(); err != nil {
			errs = append(errs, fmt.Errorf("forges.%s.prompt is not a template: %w", name, err))
		}
		if f.Triggers.Collaborators && !f.hasToken() {
			errs = append(errs, fmt.Errorf("forges.%s.triggers.collaborators needs token_file or token_env: the forge's API says who writes", name))
		}
		if (f.Kind == forge.KindGitea || f.Kind == forge.KindForgejo) && f.APIURL == "" && f.hasToken() {
			errs = append(errs, fmt.Errorf("forges.%s.api_url is required for a %s forge with a token (such as https://forge.example/api/v1)", name, f.Kind))
		}
	}
	return errs
}

// warnForges logs each forge whose triggers admit anyone.
func warnForges(log *slog.Logger, forges map[string]ForgeConfig) {
	for name, f := range forges {
		if len(f.Triggers.Users) == 0 && !f.Triggers.Collaborators {
			log.Warn("anyone who can label or comment on the forge's repositories can start tasks; set triggers.users or triggers.collaborators",
				"forge", name)
		}
	}
}

// readSecret reads the first line of file, or the variable env.
func readSecret(file, env, what string) ([]byte, error) {
	switch {
	case file != "":
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, err
		}
		line, _, _ := strings.Cut(string(b), "\n")
		return []byte(strings.TrimSpace(line)), nil
	case env != "" && os.Getenv(env) != "":
		return []byte(os.Getenv(env)), nil
	}
	return nil, fmt.Errorf("the forge has no %s: set %s_file or %s_env (a variable that is set)", what, what, what)
}

func (f ForgeConfig) secret() ([]byte, error) { return readSecret(f.SecretFile, f.SecretEnv, "secret") }

// hasToken reports whether the forge names an API token.
func (f ForgeConfig) hasToken() bool { return f.TokenFile != "" || f.TokenEnv != "" }

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// maxForgeEvent bounds a webhook's body.
const maxForgeEvent = 1 << 20

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
	event, delivery, ok := verifyForge(cfg.Kind, secret, body, r.Header)
	if !ok {
		writeErr(w, http.StatusUnauthorized, api.ErrorDetail{Code: api.CodeUnauthorized, Message: "the webhook's signature (or token) does not match the forge's secret"})
		return
	}
	in, err := parseEvent(cfg, event, body)
	if err != nil {
		badRequestf(w, "body", "is not a JSON event: %v", err)
		return
	}
	p := identity.Principal{ID: "webhook:" + name, Name: "forge " + name, DefaultTenant: cfg.tenant()}
	p.Grants = map[string]identity.Role{p.DefaultTenant: identity.Submitter}
	ctx := identity.WithPrincipal(r.Context(), p)
	action, target, status, err := a.svc.forgeAct(ctx, name, cfg, delivery, in)
	a.recordForge(ctx, p, action, target, status, err)
	switch {
	case err != nil:
		a.fail(w, r, err)
	case action == "":
		writeJSON(w, http.StatusAccepted, map[string]any{"ok": true, "ignored": true})
	case action == actionRefused:
		writeJSON(w, http.StatusAccepted, map[string]any{"ok": true, "ignored": true,
			"reason": fmt.Sprintf("%s may not trigger the fleet (forges.%s.triggers)", in.Sender, name)})
	default:
		writeJSON(w, status, map[string]any{"ok": true, "action": action, "task_id": target})
	}
}

// verifyForge checks a request's signature or token with secret and
// returns its event name and delivery id.
func verifyForge(kind string, secret, body []byte, h http.Header) (event, delivery string, ok bool) {
	switch kind {
	case forge.KindGitLab:
		delivery = orDefault(h.Get("Idempotency-Key"), h.Get("X-Gitlab-Event-UUID"))
		return h.Get("X-Gitlab-Event"), delivery, equalSecret(secret, []byte(h.Get("X-Gitlab-Token")))
	case forge.KindGitea, forge.KindForgejo:
		return h.Get("X-Gitea-Event"), h.Get("X-Gitea-Delivery"), validSignature(secret, body, h.Get("X-Gitea-Signature"))
	}
	return h.Get("X-GitHub-Event"), h.Get("X-GitHub-Delivery"), validSignature(secret, body, strings.TrimPrefix(h.Get("X-Hub-Signature-256"), "sha256="))
}

// equalSecret compares a token with the secret in constant time (of
// their digests, so neither length shows).
func equalSecret(secret, got []byte) bool {
	a, b := sha256.Sum256(secret), sha256.Sum256(got)
	return len(got) > 0 && subtle.ConstantTimeCompare(a[:], b[:]) == 1
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
	if a.principals != nil {
		appendForgeAudit(ctx, a.log, a.principals, p, action, target, status, err)
	}
}

// auditAppender writes audit entries (store.Principals does).
type auditAppender interface {
	AppendAudit(ctx context.Context, e store.AuditEntry) (store.AuditEntry, error)
}

// appendForgeAudit writes the audit entry of what forge principal p's
// event did (action on target, answered status) or the error it met;
// nothing for an event ignored. A failure to write is logged.
func appendForgeAudit(ctx context.Context, log *slog.Logger, st auditAppender, p identity.Principal, action, target string, status int, err error) {
	if action == "" && err == nil {
		return
	}
	e := store.AuditEntry{Principal: p.ID, Tenant: p.DefaultTenant, Action: orDefault(action, "forge.event"), Target: target, Status: status}
	if err != nil {
		e.Status, e.Error = http.StatusInternalServerError, err.Error()
	}
	if _, aerr := st.AppendAudit(context.WithoutCancel(ctx), e); aerr != nil {
		log.Warn("recording a forge event in the audit log", "err", aerr)
	}
}

// forgeAct maps one verified event to its action: "task.submit" (a new
// task), "task.follow_up" (of the task that opened the pull request),
// "task.conclude" (its pull request merged or closed),
// "forge.check_conflicts" (a push whose pulls are being checked),
// actionRefused (the sender may not trigger) or "" (ignored).
func (d *Dispatcher) forgeAct(ctx context.Context, name string, cfg ForgeConfig, delivery string, in inbound) (action, target string, status int, err error) {
	if allowed, err := d.mayTrigger(ctx, cfg, in); err != nil {
		return "", "", 0, fmt.Errorf("asking forge %s whether %s may trigger the fleet: %w", name, in.Sender, err)
	} else if !allowed {
		return actionRefused, in.Sender, http.StatusForbidden, nil
	}
	switch in.Cause {
	case causeLabel:
		// One task per labelled issue, however often its labels change.
		key := fmt.Sprintf("issue:%s#%d", in.Repo, in.Issue)
		return d.forgeTask(ctx, name, cfg, key, in)
	case causeComment:
		if in.Pull == 0 {
			return d.forgeTask(ctx, name, cfg, delivery, in)
		}
		return d.followPull(ctx, name, delivery, in, func() (string, error) { return in.Text, nil })
	case causeReview:
		if in.OneComment && cfg.hasToken() {
			return "", "", 0, nil // its review's event brings it with the others
		}
		return d.followPull(ctx, name, delivery, in, func() (string, error) { return d.reviewText(ctx, cfg, in) })
	case causeCI:
		return d.followCI(ctx, name, cfg, delivery, in)
	case causeConflict:
		return d.followPull(ctx, name, delivery, in, func() (string, error) { return d.rebaseText(ctx, cfg, in), nil })
	case causePush:
		return d.checkConflicts(ctx, name, cfg, delivery, in)
	case causeClosed:
		return d.concludePull(ctx, name, in)
	}
	return "", "", 0, nil
}

// forge returns the configuration of forge name.
func (d *Dispatcher) forge(name string) (ForgeConfig, bool) {
	f, ok := d.cfg.Forges[name]
	return f, ok
}

// forgeFollower is forge cfg's API client, nil when it has no token.
func (d *Dispatcher) forgeFollower(cfg ForgeConfig) (forge.Follower, error) {
	if !cfg.hasToken() {
		return nil, nil
	}
	token, err := readSecret(cfg.TokenFile, cfg.TokenEnv, "token")
	if err != nil {
		return nil, err
	}
	return forge.NewFollower(cfg.Kind, cfg.APIURL, string(token), forge.Client(d.cfg.Webhooks.AllowPrivate))
}

// errNoForgeAPI: a part of a forge's flow needs its API token.
var errNoForgeAPI = errors.New("the forge has no API token (token_file or token_env)")
