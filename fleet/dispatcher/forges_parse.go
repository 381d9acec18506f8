package dispatcher

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/agentfleet/agentfleet/fleet/delivery/forge"
)

// The causes of a forge event the dispatcher acts on.
const (
	causeLabel    = "label"    // an issue labelled for the fleet: a new task
	causeComment  = "comment"  // a comment addressed to the fleet
	causeReview   = "review"   // changes requested, or line comments
	causeCI       = "ci"       // a failed commit status, check run or pipeline
	causePush     = "push"     // a branch moved: fleet pulls on it may conflict
	causeConflict = "conflict" // the forge says a pull conflicts with its base
	causeClosed   = "closed"   // a pull merged or closed
)

// inbound is a verified event in the terms of the actions: what caused
// it, on which repository, issue or pull request, by whom.
type inbound struct {
	Cause    string
	Repo     string // owner/name (GitLab: the project's path)
	CloneURL string
	Sender   string // the login of who caused it
	SenderID string // GitLab: the user's id (its members API takes it)
	Issue    int    // the issue labelled or commented on
	Pull     int    // the pull (merge) request
	Title    string // the issue's
	Body     string // the issue's
	Text     string // the comment after the mention, or a review's body
	Review   int64  // the review, when the payload names it
	Comments []forge.ReviewComment
	CIName   string
	CIDesc   string
	CIState  string
	SHA      string // the commit a CI result is for
	Log      forge.LogRef
	Branch   string // push: the branch moved
	Merged   bool   // closed: merged rather than closed
	// OneComment marks GitHub's event of one line comment of a review:
	// with the forge's API, the review's own event brings all of them
	// at once, so this one is not acted on. OnlyComments marks a review
	// that only comments: acted on when it has line comments.
	OneComment   bool
	OnlyComments bool
}

// parseEvent reads the body of a forge kind's event (GitHub's and Gitea's
// share a shape; X-*-Event names it) into an inbound; cause "" is an
// event not acted on.
func parseEvent(cfg ForgeConfig, event string, body []byte) (inbound, error) {
	if cfg.Kind == forge.KindGitLab {
		return parseGitLab(cfg, event, body)
	}
	return parseGitHub(cfg, event, body)
}

type ghUser struct {
	Login string `json:"login"`
}

// ghEvent is the part of a GitHub- or Gitea-shaped payload read here.
type ghEvent struct {
	Action string `json:"action"`
	Ref    string `json:"ref"`
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
		Body         string `json:"body"`
		Path         string `json:"path"`
		Line         *int   `json:"line"`
		OriginalLine *int   `json:"original_line"`
	} `json:"comment"`
	Number      int `json:"number"`
	PullRequest *struct {
		Number int  `json:"number"`
		Merged bool `json:"merged"`
	} `json:"pull_request"`
	Review *struct {
		ID      int64  `json:"id"`
		State   string `json:"state"`   // GitHub
		Body    string `json:"body"`    // GitHub
		Type    string `json:"type"`    // Gitea
		Content string `json:"content"` // Gitea
	} `json:"review"`
	CheckRun *struct {
		ID         int64  `json:"id"`
		Name       string `json:"name"`
		HeadSHA    string `json:"head_sha"`
		Conclusion string `json:"conclusion"`
		Output     struct {
			Title   string `json:"title"`
			Summary string `json:"summary"`
		} `json:"output"`
		PullRequests []struct {
			Number int `json:"number"`
		} `json:"pull_requests"`
	} `json:"check_run"`
	// A commit status (the status event).
	SHA         string `json:"sha"`
	State       string `json:"state"`
	Context     string `json:"context"`
	Description string `json:"description"`
	TargetURL   string `json:"target_url"`
	Repository  struct {
		FullName string `json:"full_name"`
		CloneURL string `json:"clone_url"`
	} `json:"repository"`
	Sender ghUser `json:"sender"`
}

func isNull(raw json.RawMessage) bool { return len(raw) == 0 || string(raw) == "null" }

// parseGitHub maps GitHub's events (docs.github.com/webhooks/webhook-
// events-and-payloads) and Gitea's, which follow them.
//
//nolint:gocyclo // one flat case per event, read top to bottom beside the forge's documentation
func parseGitHub(cfg ForgeConfig, event string, body []byte) (inbound, error) {
	var ev ghEvent
	if err := json.Unmarshal(body, &ev); err != nil {
		return inbound{}, err
	}
	in := inbound{Repo: ev.Repository.FullName, CloneURL: ev.Repository.CloneURL, Sender: ev.Sender.Login}
	switch {
	case ev.Issue != nil && ghLabelled(event, ev, cfg.label()):
		in.Cause, in.Issue, in.Title, in.Body = causeLabel, ev.Issue.Number, ev.Issue.Title, ev.Issue.Body
	case event == "issue_comment" && ev.Action == "created" && ev.Issue != nil && ev.Comment != nil:
		text, ok := mentioned(ev.Comment.Body, cfg.mention())
		if !ok {
			return inbound{}, nil
		}
		in.Cause, in.Text = causeComment, text
		if isNull(ev.Issue.PullRequest) {
			in.Issue, in.Title, in.Body = ev.Issue.Number, ev.Issue.Title, ev.Issue.Body
		} else {
			in.Pull = ev.Issue.Number
		}
	case event == "pull_request_review" && ev.PullRequest != nil && ev.Review != nil &&
		(strings.EqualFold(ev.Review.State, "changes_requested") || strings.EqualFold(ev.Review.State, "commented")):
		// Its line comments are read through the API by the review's id;
		// a review that only comments and has none is not acted on.
		in.Cause, in.Pull, in.Review, in.Text = causeReview, ev.PullRequest.Number, ev.Review.ID, ev.Review.Body
		in.OnlyComments = strings.EqualFold(ev.Review.State, "commented")
	case event == "pull_request_review_comment" && ev.Action == "created" && ev.PullRequest != nil && ev.Comment != nil:
		c := forge.ReviewComment{Path: ev.Comment.Path, Body: ev.Comment.Body}
		if ev.Comment.Line != nil {
			c.Line = *ev.Comment.Line
		} else if ev.Comment.OriginalLine != nil {
			c.Line = *ev.Comment.OriginalLine
		}
		in.Cause, in.Pull, in.Comments = causeReview, ev.PullRequest.Number, []forge.ReviewComment{c}
		in.OneComment = true
	case slices.Contains(giteaReviewEvents, event) && ev.Review != nil && ev.Review.Type != "pull_request_review_approved":
		// Gitea: a review's type is its event; its comments are read
		// through the API (the payload has none).
		in.Cause, in.Pull, in.Text = causeReview, ev.Number, ev.Review.Content
	case event == "check_run" && ev.Action == "completed" && ev.CheckRun != nil &&
		(ev.CheckRun.Conclusion == "failure" || ev.CheckRun.Conclusion == "timed_out"):
		c := ev.CheckRun
		in.Cause, in.CIName, in.CIState, in.SHA, in.Log = causeCI, c.Name, c.Conclusion, c.HeadSHA, forge.LogRef{Job: c.ID}
		in.CIDesc = strings.TrimSpace(c.Output.Title + "\n\n" + c.Output.Summary)
		if len(c.PullRequests) > 0 {
			in.Pull = c.PullRequests[0].Number
		}
	case event == "status" && (ev.State == "failure" || ev.State == "error"):
		in.Cause, in.CIName, in.CIState, in.CIDesc, in.SHA = causeCI, ev.Context, ev.State, ev.Description, ev.SHA
		in.Log = forge.LogRef{URL: ev.TargetURL}
	case event == "push" && strings.HasPrefix(ev.Ref, "refs/heads/"):
		in.Cause, in.Branch = causePush, strings.TrimPrefix(ev.Ref, "refs/heads/")
	case event == "pull_request" && ev.Action == "closed" && ev.PullRequest != nil:
		in.Cause, in.Pull, in.Merged = causeClosed, orNumber(ev.PullRequest.Number, ev.Number), ev.PullRequest.Merged
	}
	return in, nil
}

// giteaReviewEvents are the X-Gitea-Event values of a review (a comment
// review or one rejecting the pull) and their fine-grained names.
var giteaReviewEvents = []string{"pull_request_rejected", "pull_request_comment", "pull_request_review_rejected", "pull_request_review_comment"}

func orNumber(n, def int) int {
	if n == 0 {
		return def
	}
	return n
}

// ghLabelled reports whether ev labels an issue with label: GitHub's
// issues "labeled" with its label, Gitea's "label_updated" (sent as an
// issues or issue_label event) with the issue's labels.
func ghLabelled(event string, ev ghEvent, label string) bool {
	switch {
	case event == "issues" && ev.Action == "labeled":
		return ev.Label != nil && ev.Label.Name == label
	case (event == "issues" || event == "issue_label") && ev.Action == "label_updated":
		return slices.ContainsFunc(ev.Issue.Labels, func(l struct {
			Name string `json:"name"`
		}) bool {
			return l.Name == label
		})
	}
	return false
}

// mentioned returns the text of a comment addressed to the fleet (after
// its mention); ok is false for any other comment.
func mentioned(body, mention string) (string, bool) {
	text, ok := strings.CutPrefix(strings.TrimSpace(body), mention)
	text = strings.TrimSpace(text)
	return text, ok && text != ""
}

type glLabel struct {
	Title string `json:"title"`
}

type glReviewer struct {
	Username string `json:"username"`
	State    string `json:"state"`
}

// glEvent is the part of a GitLab payload read here
// (docs.gitlab.com/user/project/integrations/webhook_events).
type glEvent struct {
	ObjectKind string `json:"object_kind"`
	Ref        string `json:"ref"`
	User       struct {
		ID       int64  `json:"id"`
		Username string `json:"username"`
	} `json:"user"`
	UserID       int64  `json:"user_id"`       // push
	UserUsername string `json:"user_username"` // push
	Project      struct {
		PathWithNamespace string `json:"path_with_namespace"`
		GitHTTPURL        string `json:"git_http_url"`
	} `json:"project"`
	ObjectAttributes struct {
		IID                 int    `json:"iid"`
		Title               string `json:"title"`
		Description         string `json:"description"`
		Action              string `json:"action"`
		State               string `json:"state"`
		Note                string `json:"note"`
		NoteableType        string `json:"noteable_type"` //nolint:misspell // GitLab's name
		Type                string `json:"type"`
		Status              string `json:"status"`
		SHA                 string `json:"sha"`
		MergeStatus         string `json:"merge_status"`
		DetailedMergeStatus string `json:"detailed_merge_status"`
		Position            *struct {
			NewPath string `json:"new_path"`
			NewLine *int   `json:"new_line"`
			OldLine *int   `json:"old_line"`
		} `json:"position"`
	} `json:"object_attributes"`
	Labels  []glLabel `json:"labels"`
	Changes struct {
		Labels *struct {
			Previous []glLabel `json:"previous"`
			Current  []glLabel `json:"current"`
		} `json:"labels"`
		Reviewers *struct {
			Previous []glReviewer `json:"previous"`
			Current  []glReviewer `json:"current"`
		} `json:"reviewers"`
	} `json:"changes"`
	Issue *struct {
		IID         int    `json:"iid"`
		Title       string `json:"title"`
		Description string `json:"description"`
	} `json:"issue"`
	MergeRequest *struct {
		IID int `json:"iid"`
	} `json:"merge_request"`
	Builds []struct {
		ID            int64  `json:"id"`
		Name          string `json:"name"`
		Stage         string `json:"stage"`
		Status        string `json:"status"`
		FailureReason string `json:"failure_reason"`
	} `json:"builds"`
}

func hasLabel(ls []glLabel, name string) bool {
	return slices.ContainsFunc(ls, func(l glLabel) bool { return l.Title == name })
}

// parseGitLab maps GitLab's Issue, Note, Pipeline, Merge Request and Push
// hooks (X-Gitlab-Event).
//
//nolint:gocyclo // one flat case per hook, read top to bottom beside the forge's documentation
func parseGitLab(cfg ForgeConfig, event string, body []byte) (inbound, error) {
	var ev glEvent
	if err := json.Unmarshal(body, &ev); err != nil {
		return inbound{}, err
	}
	a := ev.ObjectAttributes
	in := inbound{Repo: ev.Project.PathWithNamespace, CloneURL: ev.Project.GitHTTPURL, Sender: ev.User.Username}
	if ev.User.ID != 0 {
		in.SenderID = strconv.FormatInt(ev.User.ID, 10)
	}
	switch event {
	case "Issue Hook":
		label := cfg.label()
		added := hasLabel(ev.Labels, label) && (a.Action == "open" ||
			(ev.Changes.Labels != nil && !hasLabel(ev.Changes.Labels.Previous, label) && hasLabel(ev.Changes.Labels.Current, label)))
		if added {
			in.Cause, in.Issue, in.Title, in.Body = causeLabel, a.IID, a.Title, a.Description
		}
	case "Note Hook":
		text, ok := mentioned(a.Note, cfg.mention())
		switch {
		case ok && a.NoteableType == "Issue" && ev.Issue != nil:
			in.Cause, in.Text, in.Issue, in.Title, in.Body = causeComment, text, ev.Issue.IID, ev.Issue.Title, ev.Issue.Description
		case ok && a.NoteableType == "MergeRequest" && ev.MergeRequest != nil:
			in.Cause, in.Text, in.Pull = causeComment, text, ev.MergeRequest.IID
		case a.NoteableType == "MergeRequest" && ev.MergeRequest != nil && a.Type == "DiffNote" && a.Position != nil:
			c := forge.ReviewComment{Path: a.Position.NewPath, Body: a.Note}
			if a.Position.NewLine != nil {
				c.Line = *a.Position.NewLine
			} else if a.Position.OldLine != nil {
				c.Line = *a.Position.OldLine
			}
			in.Cause, in.Pull, in.Comments = causeReview, ev.MergeRequest.IID, []forge.ReviewComment{c}
		}
	case "Pipeline Hook":
		if a.Status != "failed" {
			break
		}
		in.Cause, in.CIState, in.SHA, in.CIName = causeCI, a.Status, a.SHA, "pipeline"
		if ev.MergeRequest != nil {
			in.Pull = ev.MergeRequest.IID
		}
		for _, b := range ev.Builds {
			if b.Status == "failed" {
				in.CIName, in.CIDesc, in.Log = b.Name, fmt.Sprintf("stage %s: %s", b.Stage, b.FailureReason), forge.LogRef{Job: b.ID}
				break
			}
		}
	case "Merge Request Hook":
		in.Pull = a.IID
		switch {
		case a.Action == "merge":
			in.Cause, in.Merged = causeClosed, true
		case a.Action == "close":
			in.Cause = causeClosed
		case ev.Changes.Reviewers != nil && requestedChanges(ev.Changes.Reviewers.Current, ev.Changes.Reviewers.Previous) != "":
			in.Cause, in.Sender = causeReview, requestedChanges(ev.Changes.Reviewers.Current, ev.Changes.Reviewers.Previous)
		case a.State == "opened" && (a.DetailedMergeStatus == "conflict" || a.MergeStatus == "cannot_be_merged"):
			in.Cause = causeConflict
		}
	case "Push Hook":
		if b, ok := strings.CutPrefix(ev.Ref, "refs/heads/"); ok {
			in.Cause, in.Branch, in.Sender = causePush, b, ev.UserUsername
		}
	}
	return in, nil
}

// requestedChanges returns the reviewer of current who now requests
// changes (and did not before), "" when none does.
func requestedChanges(current, previous []glReviewer) string {
	for _, r := range current {
		if r.State != "requested_changes" {
			continue
		}
		if !slices.ContainsFunc(previous, func(p glReviewer) bool { return p.Username == r.Username && p.State == r.State }) {
			return r.Username
		}
	}
	return ""
}
