package dispatcher

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"text/template"
	"time"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/api"
	"github.com/agentfleet/agentfleet/fleet/delivery/forge"
	"github.com/agentfleet/agentfleet/internal/identity"
	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/store"
)

// Following a fleet pull request after it was opened: the follow-ups its
// forge's events bring (CI failures, reviews, conflicts) and its end
// (merged or closed). See forges.go for the events.

// actionRefused is the audit action of an event whose sender may not
// trigger the fleet.
const actionRefused = "forge.refused"

// Artifact kinds of the forge flow, on the task they concern.
const (
	// ForgeEventKind remembers an event that followed a task up, named
	// "<cause>:<delivery id>": a redelivery acts once, and the CI repairs
	// are counted by it.
	ForgeEventKind = "forge_event"
	// OutcomeKind records how a task's pull request ended (name
	// OutcomeName, a JSON Outcome).
	OutcomeKind = "outcome"
	OutcomeName = "pull_request"
)

// Outcomes of a task's pull request.
const (
	OutcomeMerged = "merged"
	OutcomeClosed = "closed"
)

// Outcome is how a task's pull request ended: the task stays succeeded
// (its work was delivered) and this records what the forge did with it.
type Outcome struct {
	Outcome     string    `json:"outcome"` // OutcomeMerged or OutcomeClosed
	PullRequest int       `json:"pull_request"`
	By          string    `json:"by,omitempty"`
	At          time.Time `json:"at"`
}

// ErrTaskConcluded: the task's pull request was merged or closed; it takes
// no more follow-ups.
var ErrTaskConcluded = fmt.Errorf("dispatcher: the task's pull request was merged or closed: %w", store.ErrConflict)

// humanCauses are the events people cause, which the triggers rule admits.
var humanCauses = []string{causeLabel, causeComment, causeReview}

// mayTrigger applies cfg's triggers rule to the sender of in.
func (d *Dispatcher) mayTrigger(ctx context.Context, cfg ForgeConfig, in inbound) (bool, error) {
	t := cfg.Triggers
	if !slices.Contains(humanCauses, in.Cause) || (len(t.Users) == 0 && !t.Collaborators) {
		return true, nil
	}
	if in.Sender != "" && slices.Contains(t.Users, in.Sender) {
		return true, nil
	}
	if !t.Collaborators || in.Sender == "" {
		return false, nil
	}
	f, err := d.forgeFollower(cfg)
	if err != nil || f == nil {
		return false, errors.Join(err, errNoForgeAPI)
	}
	user := in.Sender
	if cfg.Kind == forge.KindGitLab {
		user = in.SenderID
	}
	return f.MayTrigger(ctx, in.Repo, user)
}

// DefaultForgePrompt is a forge's prompt template when it sets none.
const DefaultForgePrompt = `{{.Title}}

{{.Body}}{{range .Comments}}

{{.Author}} commented:
{{.Body}}{{end}}{{if .Request}}

{{.Request}}{{end}}`

// ForgePrompt is what a forge's prompt template is executed on.
type ForgePrompt struct {
	Repo     string // owner/name (GitLab: the project's path)
	Number   int    // the issue's
	Title    string
	Body     string
	Comments []forge.Comment // the issue's, oldest first, without those addressing the fleet
	Request  string          // the text of the comment that addressed the fleet, if one did
}

func (f ForgeConfig) promptTemplate() (*template.Template, error) {
	return template.New("prompt").Option("missingkey=error").Parse(orDefault(f.Prompt, DefaultForgePrompt))
}

// issuePrompt executes cfg's prompt template for in's issue.
func (d *Dispatcher) issuePrompt(ctx context.Context, cfg ForgeConfig, in inbound) (string, error) {
	data := ForgePrompt{Repo: in.Repo, Number: in.Issue, Title: in.Title, Body: in.Body, Request: in.Text}
	if f, err := d.forgeFollower(cfg); err != nil || f == nil {
		d.log.Debug("an issue's prompt without its comments: the forge has no API token", "err", err)
	} else if cs, err := f.IssueComments(ctx, in.Repo, in.Issue); err != nil {
		d.log.Warn("reading an issue's comments for its prompt", "repo", in.Repo, "issue", in.Issue, "err", err)
	} else {
		data.Comments = slices.DeleteFunc(cs, func(c forge.Comment) bool { return strings.HasPrefix(strings.TrimSpace(c.Body), cfg.mention()) })
	}
	tmpl, err := cfg.promptTemplate()
	if err != nil {
		return "", err
	}
	var b strings.Builder
	if err := tmpl.Execute(&b, data); err != nil {
		return "", fmt.Errorf("the forge's prompt template: %w", err)
	}
	return strings.TrimSpace(b.String()), nil
}

// forgeTask submits the forge's template for in's issue, under the
// idempotency key (the issue's, or the delivery's).
func (d *Dispatcher) forgeTask(ctx context.Context, name string, cfg ForgeConfig, key string, in inbound) (string, string, int, error) {
	prompt, err := d.issuePrompt(ctx, cfg, in)
	if err != nil {
		return "task.submit", "", 0, err
	}
	spec := cfg.Spec
	spec.Prompt = prompt
	spec.Tenant = cfg.tenant()
	spec.Environment.Repo = orDefault(spec.Environment.Repo, in.CloneURL)
	if key != "" {
		spec.IdempotencyKey = "forge:" + name + ":" + key
	}
	spec.Labels = map[string]string{"forge": name, "forge_repo": in.Repo, "forge_issue": strconv.Itoa(in.Issue)}
	if spec.Delivery != nil && spec.Delivery.PullRequest != nil {
		d2, pr := *spec.Delivery, *spec.Delivery.PullRequest
		pr.Body = strings.TrimSpace(pr.Body + fmt.Sprintf("\n\nFixes #%d", in.Issue))
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

// followPull gives the task of forge name that opened in's pull request
// the message text makes for it: a follow-up of its running session, or a
// reopening when it ended (Dispatcher.Reopen). No such task, a concluded
// one, an empty text: ignored. A delivery already acted on answers 200.
func (d *Dispatcher) followPull(ctx context.Context, name string, delivery string, in inbound, text func() (string, error)) (string, string, int, error) {
	t, err := d.taskOfPull(ctx, name, in.Repo, in.Pull)
	if err != nil || t.ID == uuid.Nil {
		return "", "", 0, err
	}
	return d.follow(ctx, t, in.Cause, delivery, text)
}

// follow gives task t the follow-up text returns, once per delivery.
func (d *Dispatcher) follow(ctx context.Context, t store.Task, cause, delivery string, text func() (string, error)) (string, string, int, error) {
	arts, err := d.store.ListArtifacts(ctx, store.ListArtifactsParams{TaskID: t.ID})
	if err != nil {
		return "", "", 0, err
	}
	return d.followWith(ctx, t, arts, cause, delivery, text)
}

// followWith is follow with t's artifacts read.
func (d *Dispatcher) followWith(ctx context.Context, t store.Task, arts []store.Artifact, cause, delivery string, text func() (string, error)) (string, string, int, error) {
	if concluded(arts) {
		return "", "", 0, nil
	}
	mark := cause + ":" + delivery
	if delivery != "" && slices.ContainsFunc(arts, func(a store.Artifact) bool { return a.Kind == ForgeEventKind && a.Name == mark }) {
		return "task.follow_up", t.ID.String(), http.StatusOK, nil
	}
	msg, err := text()
	if err != nil || strings.TrimSpace(msg) == "" {
		return "", "", 0, err
	}
	if t.State == store.TaskSucceeded || t.State == store.TaskFailed {
		round := WithRoundTrigger(ctx, RoundTrigger{Trigger: api.TriggerForge, Cause: cause, Detail: delivery})
		_, err = d.Reopen(round, t, msg)
	} else {
		_, err = d.Control(ctx, t.ID, queue.ControlRequest{Op: queue.OpFollowUp, Message: msg})
	}
	if err != nil {
		return "task.follow_up", t.ID.String(), 0, err
	}
	if delivery == "" { // remembered all the same: CI repairs are counted by these
		mark = cause + ":" + uuid.NewString()
	}
	if _, err := d.store.PutArtifact(ctx, store.PutArtifactParams{TaskID: t.ID, Kind: ForgeEventKind, Name: mark,
		ContentType: "text/plain; charset=utf-8", Content: []byte(cause)}); err != nil {
		d.log.Warn("remembering a forge event", "task", t.ID, "err", err)
	}
	return "task.follow_up", t.ID.String(), http.StatusAccepted, nil
}

// concluded reports whether a task's artifacts record its pull request's
// end.
func concluded(arts []store.Artifact) bool {
	return slices.ContainsFunc(arts, func(a store.Artifact) bool { return a.Kind == OutcomeKind && a.Name == OutcomeName })
}

// reviewText is the follow-up of a review: its body and its comments with
// their file and line (read through the forge's API when the payload has
// none).
func (d *Dispatcher) reviewText(ctx context.Context, cfg ForgeConfig, in inbound) (string, error) {
	comments := in.Comments
	if len(comments) == 0 {
		f, err := d.forgeFollower(cfg)
		if err != nil {
			return "", err
		}
		if f != nil {
			if comments, err = f.ReviewComments(ctx, in.Repo, in.Pull, in.Review); err != nil {
				return "", fmt.Errorf("reading the review's comments: %w", err)
			}
		}
	}
	if (strings.TrimSpace(in.Text) == "" || in.OnlyComments) && len(comments) == 0 {
		return "", nil // nothing asked, or a comment-only review without line comments
	}
	var b strings.Builder
	who := orDefault(in.Sender, "A reviewer")
	fmt.Fprintf(&b, "%s reviewed your pull request and asks for changes.\n", who)
	if s := strings.TrimSpace(in.Text); s != "" {
		fmt.Fprintf(&b, "\n%s\n", s)
	}
	for _, c := range comments {
		if c.Line > 0 {
			fmt.Fprintf(&b, "\n%s line %d:\n%s\n", c.Path, c.Line, c.Body)
		} else {
			fmt.Fprintf(&b, "\n%s:\n%s\n", orDefault(c.Path, "(the pull request)"), c.Body)
		}
	}
	b.WriteString("\nAddress each comment, make the checks pass, and keep the same branch.")
	return b.String(), nil
}

// Log excerpts: the end of a failed job's log, where it says why.
const (
	logExcerptLines = 60
	logExcerptBytes = 6000
)

// excerpt is the end of log: at most logExcerptLines lines and
// logExcerptBytes bytes.
func excerpt(log string) string {
	log = strings.TrimRight(log, "\n")
	lines := strings.Split(log, "\n")
	lines = lines[max(0, len(lines)-logExcerptLines):]
	s := strings.Join(lines, "\n")
	if len(s) > logExcerptBytes {
		s = s[len(s)-logExcerptBytes:]
	}
	return strings.ToValidUTF8(s, "")
}

// followCI follows up the task whose pull request (or delivered commit) a
// CI result failed on, within cfg's max_ci_repairs.
func (d *Dispatcher) followCI(ctx context.Context, name string, cfg ForgeConfig, delivery string, in inbound) (string, string, int, error) {
	var t store.Task
	var err error
	if in.Pull != 0 {
		t, err = d.taskOfPull(ctx, name, in.Repo, in.Pull)
	} else {
		t, err = d.taskOfCommit(ctx, name, in.Repo, in.SHA)
	}
	if err != nil || t.ID == uuid.Nil {
		return "", "", 0, err
	}
	if res, _ := fleet.DecodeResult(t.Result); in.SHA != "" && res.Delivery != nil && res.Delivery.Commit != "" && res.Delivery.Commit != in.SHA {
		return "", "", 0, nil // a result for a commit the branch moved past
	}
	arts, err := d.store.ListArtifacts(ctx, store.ListArtifactsParams{TaskID: t.ID})
	if err != nil {
		return "", "", 0, err
	}
	repairs := 0
	for _, a := range arts {
		if a.Kind == ForgeEventKind && strings.HasPrefix(a.Name, causeCI+":") {
			repairs++
		}
	}
	if repairs >= cfg.maxCIRepairs() {
		d.log.Info("a failed CI result is not followed up: max_ci_repairs reached", "task", t.ID, "repairs", repairs, "check", in.CIName)
		return "forge.ci_repairs_exhausted", t.ID.String(), http.StatusAccepted, nil
	}
	return d.followWith(ctx, t, arts, causeCI, delivery, func() (string, error) { return d.ciText(ctx, cfg, in), nil })
}

// ciText is the follow-up of a failed CI result.
func (d *Dispatcher) ciText(ctx context.Context, cfg ForgeConfig, in inbound) string {
	var b strings.Builder
	fmt.Fprintf(&b, "The check %q failed (%s) on your pull request", in.CIName, in.CIState)
	if in.SHA != "" {
		fmt.Fprintf(&b, " at commit %s", in.SHA)
	}
	b.WriteString(".\n")
	if s := strings.TrimSpace(in.CIDesc); s != "" {
		fmt.Fprintf(&b, "\n%s\n", s)
	}
	if f, err := d.forgeFollower(cfg); err == nil && f != nil {
		log, err := f.JobLog(ctx, in.Repo, in.Log)
		switch {
		case err == nil && strings.TrimSpace(log) != "":
			fmt.Fprintf(&b, "\nThe end of its log:\n```\n%s\n```\n", excerpt(log))
		case err != nil && !errors.Is(err, forge.ErrNoLog):
			d.log.Warn("reading a failed job's log", "check", in.CIName, "err", err)
		}
	}
	b.WriteString("\nFind the cause, fix it, make the checks pass, and keep the same branch.")
	return b.String()
}

// rebaseText is the follow-up of a pull request that conflicts with its
// base.
func (d *Dispatcher) rebaseText(ctx context.Context, cfg ForgeConfig, in inbound) string {
	base := in.Branch
	if base == "" {
		if f, err := d.forgeFollower(cfg); err == nil && f != nil {
			if p, err := f.Pull(ctx, in.Repo, in.Pull); err == nil {
				base = p.Base
			}
		}
	}
	return conflictText(orDefault(base, "the base branch"))
}

func conflictText(base string) string {
	return fmt.Sprintf("The base branch %[1]s moved and your pull request now conflicts with it. "+
		"Rebase your work onto origin/%[1]s (your clone has it: git rebase origin/%[1]s), resolve each conflict "+
		"keeping both sides' intent, finish the rebase, make the checks pass, and keep the same branch.", base)
}

// Conflict checks: after a push to a base branch, the forge checks its
// pull requests again, asynchronously (Gitea says "not mergeable" while
// it checks, and may answer from before the push at first). So each
// fleet pull request on that base is read every conflictPoll for
// conflictWindow, and one the last conflictReads reads all saw in
// conflict is followed up.
var (
	conflictPoll   = 500 * time.Millisecond
	conflictWindow = 6 * time.Second
	conflictReads  = 4
)

// checkConflicts starts the conflict checks of the pull requests a push
// to in.Branch may have put in conflict; their follow-ups are audited
// when they happen. The checks outlive the request (Run waits for them
// when it returns); each ends within conflictWindow and a read's timeout.
func (d *Dispatcher) checkConflicts(ctx context.Context, name string, cfg ForgeConfig, delivery string, in inbound) (string, string, int, error) {
	f, err := d.forgeFollower(cfg)
	if err != nil || f == nil {
		return "", "", 0, err
	}
	tasks, err := d.pullTasks(ctx, name, in.Repo)
	if err != nil || len(tasks) == 0 {
		return "", "", 0, err
	}
	bg := context.WithoutCancel(ctx) // the principal stays; the request does not
	timing := conflictTiming{poll: conflictPoll, window: conflictWindow, reads: conflictReads}
	for _, t := range tasks {
		d.forgeChecks.Go(func() {
			ctx, cancel := context.WithTimeout(bg, timing.window+30*time.Second)
			defer cancel()
			res, _ := fleet.DecodeResult(t.Result)
			if !d.pullConflicts(ctx, f, timing, in.Repo, in.Branch, res.Delivery.RequestNumber) {
				return
			}
			action, target, status, err := d.follow(ctx, t, causeConflict, delivery, func() (string, error) {
				return conflictText(in.Branch), nil
			})
			if err != nil {
				d.log.Warn("following up a pull request in conflict", "task", t.ID, "err", err)
			}
			d.auditForge(ctx, action, target, status, err)
		})
	}
	return "forge.check_conflicts", in.Branch, http.StatusAccepted, nil
}

// conflictTiming is the timing of one conflict check.
type conflictTiming struct {
	poll, window time.Duration
	reads        int
}

// pullConflicts reads pull number until it is decided: false when it is
// not open, is on another base, or was not seen in conflict conflictReads
// times in a row by the window's end; true when it was, after half the
// window at least (a forge may answer from before the push at first).
func (d *Dispatcher) pullConflicts(ctx context.Context, f forge.Follower, c conflictTiming, repo, base string, number int) bool {
	streak := 0
	start := time.Now()
	tick := time.NewTicker(c.poll)
	defer tick.Stop()
	for {
		p, err := f.Pull(ctx, repo, number)
		switch {
		case err != nil:
			d.log.Warn("reading a pull request's state", "repo", repo, "pull", number, "err", err)
			return false
		case p.State != forge.PullOpen || p.Base != base:
			return false
		case p.Conflict:
			streak++
		case !p.Checking:
			streak = 0
		}
		elapsed := time.Since(start)
		if streak >= c.reads && elapsed >= c.window/2 {
			return true
		}
		if elapsed > c.window {
			return false
		}
		select {
		case <-ctx.Done():
			return false
		case <-tick.C:
		}
	}
}

// auditForge records an action of the forge principal in ctx done outside
// a request (a conflict check's follow-up).
func (d *Dispatcher) auditForge(ctx context.Context, action, target string, status int, err error) {
	if p, ok := identity.FromContext(ctx); ok {
		appendForgeAudit(ctx, d.log, d.store, p, action, target, status, err)
	}
}

// concludePull records that in's pull request was merged or closed on its
// task: the task's outcome; it takes no more follow-ups, and its tree's
// repository in the fleet git store is released (gitstore_lease.go).
func (d *Dispatcher) concludePull(ctx context.Context, name string, in inbound) (string, string, int, error) {
	t, err := d.taskOfPull(ctx, name, in.Repo, in.Pull)
	if err != nil || t.ID == uuid.Nil {
		return "", "", 0, err
	}
	o := Outcome{Outcome: OutcomeClosed, PullRequest: in.Pull, By: in.Sender, At: time.Now().UTC()}
	if in.Merged {
		o.Outcome = OutcomeMerged
	}
	raw, _ := json.Marshal(o)
	if _, err := d.store.PutArtifact(ctx, store.PutArtifactParams{TaskID: t.ID, Kind: OutcomeKind, Name: OutcomeName,
		ContentType: "application/json", Content: raw}); err != nil {
		return "task.conclude", t.ID.String(), 0, err
	}
	d.releaseTree(ctx, t.RootID)
	return "task.conclude", t.ID.String(), http.StatusOK, nil
}

// TaskOutcome returns how task id's pull request ended (a zero Outcome
// while it has not): the outcome the forge's webhooks recorded.
func (d *Dispatcher) TaskOutcome(ctx context.Context, id uuid.UUID) (Outcome, error) {
	return taskOutcome(ctx, d.store, id)
}

// artifactGetter reads one artifact (a store.Store does).
type artifactGetter interface {
	GetArtifact(ctx context.Context, p store.GetArtifactParams) (store.Artifact, error)
}

func taskOutcome(ctx context.Context, st artifactGetter, id uuid.UUID) (Outcome, error) {
	a, err := st.GetArtifact(ctx, store.GetArtifactParams{TaskID: id, Kind: OutcomeKind, Name: OutcomeName})
	if errors.Is(err, store.ErrNotFound) {
		return Outcome{}, nil
	}
	if err != nil {
		return Outcome{}, err
	}
	var o Outcome
	return o, json.Unmarshal(a.Content, &o)
}

// withOutcome adds the outcome of a forge task's pull request to its view
// (only a forge's ended tasks can have one).
func withOutcome(ctx context.Context, st artifactGetter, v api.TaskView) api.TaskView {
	if v.Labels["forge"] == "" || !v.State.Terminal() {
		return v
	}
	if o, err := taskOutcome(ctx, st, v.ID); err == nil {
		v.Outcome = o.Outcome
	}
	return v
}

// forgeTasks lists the tasks of forge name on repo.
func (d *Dispatcher) forgeTasks(ctx context.Context, name, repo string) ([]store.Task, error) {
	page, err := d.store.ListTasks(ctx, store.ListTasksParams{Labels: map[string]string{"forge": name, "forge_repo": repo}, Limit: 1000})
	return page.Tasks, err
}

// pullTasks lists the tasks of forge name on repo whose result holds an
// opened pull request.
func (d *Dispatcher) pullTasks(ctx context.Context, name, repo string) ([]store.Task, error) {
	tasks, err := d.forgeTasks(ctx, name, repo)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(tasks, func(t store.Task) bool {
		res, ok := fleet.DecodeResult(t.Result)
		return !ok || res.Delivery == nil || res.Delivery.RequestNumber == 0
	}), nil
}

// taskOfPull finds the task of forge name that opened pull request number
// of repo (its result's delivery); a zero task when none did.
func (d *Dispatcher) taskOfPull(ctx context.Context, name, repo string, number int) (store.Task, error) {
	return d.pullTaskWhere(ctx, name, repo, func(r *fleet.DeliveryResult) bool { return r.RequestNumber == number })
}

// taskOfCommit finds the task of forge name whose last delivery pushed
// commit sha to repo; a zero task when none did.
func (d *Dispatcher) taskOfCommit(ctx context.Context, name, repo, sha string) (store.Task, error) {
	if sha == "" {
		return store.Task{}, nil
	}
	return d.pullTaskWhere(ctx, name, repo, func(r *fleet.DeliveryResult) bool { return r.Commit == sha })
}

// pullTaskWhere finds the first of pullTasks whose result's delivery
// matches; a zero task when none does.
func (d *Dispatcher) pullTaskWhere(ctx context.Context, name, repo string, match func(*fleet.DeliveryResult) bool) (store.Task, error) {
	tasks, err := d.pullTasks(ctx, name, repo)
	for _, t := range tasks {
		if res, _ := fleet.DecodeResult(t.Result); match(res.Delivery) {
			return t, nil
		}
	}
	return store.Task{}, err
}
