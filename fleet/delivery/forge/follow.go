package forge

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// Follower reads what a forge says about a pull request after it was
// opened, for the dispatcher that follows it (fleet/dispatcher's forge
// webhooks): its state, the comments of a review, the log of a failed
// job, and whether a user may make the fleet act on a repository.
type Follower interface {
	// Pull reads pull request number of repo.
	Pull(ctx context.Context, repo string, number int) (Pull, error)
	// ReviewComments lists the line comments of review (0: of the
	// latest review; GitLab: the unresolved diff notes).
	ReviewComments(ctx context.Context, repo string, number int, review int64) ([]ReviewComment, error)
	// JobLog reads the log of a CI job: by its id (GitHub Actions' job of
	// a check run, GitLab's job) or, for a commit status, its target URL
	// when that URL is on the forge's own origin. ErrNoLog when the forge
	// has no log for it.
	JobLog(ctx context.Context, repo string, ref LogRef) (string, error)
	// IssueComments lists the comments of issue number, oldest first (at
	// most 100; GitLab: its notes that are not system notes).
	IssueComments(ctx context.Context, repo string, number int) ([]Comment, error)
	// MayTrigger reports whether user (GitHub and Gitea: the login;
	// GitLab: the numeric user id) may write to repo: a collaborator
	// with write (GitHub, Gitea) or a member with Developer access or
	// more (GitLab).
	MayTrigger(ctx context.Context, repo, user string) (bool, error)
}

// Pull states.
const (
	PullOpen   = "open"
	PullClosed = "closed"
	PullMerged = "merged"
)

// Pull is a pull (merge) request as the forge reads it.
type Pull struct {
	Number  int
	State   string // PullOpen, PullClosed or PullMerged
	Base    string // the branch it is for
	Head    string // the branch with the changes
	HeadSHA string
	// Conflict is true when the forge found the request in conflict with
	// its base; Checking when it has not finished finding out (Gitea
	// reports a check in progress as not mergeable, so there Checking is
	// never set and a caller reads again).
	Conflict bool
	Checking bool
}

// ReviewComment is a reviewer's comment on a line.
type ReviewComment struct {
	Path string
	Line int // 0 when it is on the file, or the line is gone
	Body string
}

// Comment is a comment on an issue.
type Comment struct {
	Author string
	Body   string
}

// LogRef names a CI job's log.
type LogRef struct {
	Job int64  // the job's id
	URL string // a commit status's target_url
}

// ErrNoLog: the forge keeps no log for the job named.
var ErrNoLog = errors.New("forge: no log for this job")

// maxLog bounds the log read: its end is what says why it failed.
const maxLog = 1 << 20

// NewFollower is New's adapter as a Follower.
func NewFollower(kind, apiURL, token string, client *http.Client) (Follower, error) {
	f, err := New(kind, apiURL, token, client)
	if err != nil {
		return nil, err
	}
	return f.(Follower), nil
}

// text GETs path (or an absolute URL on the API's origin) and returns
// the end of its body, at most maxLog bytes.
func (c *rest) text(ctx context.Context, target string) (string, error) {
	if !strings.HasPrefix(target, "http://") && !strings.HasPrefix(target, "https://") {
		target = c.base + target
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return "", err
	}
	maps.Copy(req.Header, c.header)
	req.Header.Set("User-Agent", "agentfleet")
	resp, err := c.client.Do(req)
	if err != nil {
		return "", fmt.Errorf("%s: GET %s: %w", c.kind, req.URL.Path, err)
	}
	defer func() { _ = resp.Body.Close() }()
	raw, err := readTail(resp.Body, maxLog)
	if err != nil {
		return "", fmt.Errorf("%s: GET %s: reading the log: %w", c.kind, req.URL.Path, err)
	}
	if resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusGone {
		return "", ErrNoLog
	}
	if resp.StatusCode/100 != 2 {
		return "", &Error{Kind: c.kind, Method: "GET", Path: req.URL.Path, Status: resp.StatusCode, Message: errorMessage(raw)}
	}
	return string(raw), nil
}

// readTail reads r to its end and returns its last n bytes, holding a few
// times n meanwhile, whatever r's size: a CI log can run to hundreds of
// megabytes, and only its end says why the job failed.
func readTail(r io.Reader, n int) ([]byte, error) {
	var buf []byte
	chunk := make([]byte, 32<<10)
	for {
		k, err := r.Read(chunk)
		buf = append(buf, chunk[:k]...)
		if len(buf) > 2*n {
			buf = append(buf[:0], buf[len(buf)-n:]...) // copy moves overlapping bytes safely
		}
		switch {
		case errors.Is(err, io.EOF):
			return buf[max(0, len(buf)-n):], nil
		case err != nil:
			return nil, err
		}
	}
}

// sameOrigin reports whether target is on the API's origin.
func (c *rest) sameOrigin(target string) bool {
	t, err1 := url.Parse(target)
	b, err2 := url.Parse(c.base)
	return err1 == nil && err2 == nil && t.Scheme == b.Scheme && t.Host == b.Host
}

// permissionWrites reports whether a GitHub or Gitea permission level
// writes.
func permissionWrites(p string) bool {
	switch p {
	case "admin", "owner", "maintain", "write":
		return true
	}
	return false
}

// GitHub: docs.github.com/rest/pulls, rest/actions/workflow-jobs,
// rest/collaborators.

type githubPullState struct {
	Number    int    `json:"number"`
	State     string `json:"state"`
	Merged    bool   `json:"merged"`
	Mergeable *bool  `json:"mergeable"`
	Base      struct {
		Ref string `json:"ref"`
	} `json:"base"`
	Head struct {
		Ref string `json:"ref"`
		SHA string `json:"sha"`
	} `json:"head"`
}

func (p githubPullState) pull() Pull {
	out := Pull{Number: p.Number, State: p.State, Base: p.Base.Ref, Head: p.Head.Ref, HeadSHA: p.Head.SHA}
	if p.Merged {
		out.State = PullMerged
	}
	out.Checking = p.Mergeable == nil && out.State == PullOpen
	out.Conflict = p.Mergeable != nil && !*p.Mergeable
	return out
}

func (g *github) Pull(ctx context.Context, repo string, number int) (Pull, error) {
	path, err := splitRepo(repo)
	if err != nil {
		return Pull{}, err
	}
	var p githubPullState
	if err := g.do(ctx, "GET", fmt.Sprintf("/repos/%s/pulls/%d", path, number), nil, &p); err != nil {
		return Pull{}, err
	}
	return p.pull(), nil
}

type lineComment struct {
	Path         string `json:"path"`
	Line         *int   `json:"line"`
	OriginalLine *int   `json:"original_line"`
	Body         string `json:"body"`
}

func (c lineComment) comment() ReviewComment {
	r := ReviewComment{Path: c.Path, Body: c.Body}
	switch {
	case c.Line != nil:
		r.Line = *c.Line
	case c.OriginalLine != nil:
		r.Line = *c.OriginalLine
	}
	return r
}

func (g *github) ReviewComments(ctx context.Context, repo string, number int, review int64) ([]ReviewComment, error) {
	path, err := splitRepo(repo)
	if err != nil {
		return nil, err
	}
	p := fmt.Sprintf("/repos/%s/pulls/%d/comments?per_page=100", path, number)
	if review != 0 {
		p = fmt.Sprintf("/repos/%s/pulls/%d/reviews/%d/comments?per_page=100", path, number, review)
	}
	var cs []lineComment
	if err := g.do(ctx, "GET", p, nil, &cs); err != nil {
		return nil, err
	}
	out := make([]ReviewComment, len(cs))
	for i, c := range cs {
		out[i] = c.comment()
	}
	return out, nil
}

// JobLog reads an Actions job's log (a check run of GitHub Actions has
// its job's id); the API answers with a redirect to the log, which the
// client follows without the token.
func (g *github) JobLog(ctx context.Context, repo string, ref LogRef) (string, error) {
	path, err := splitRepo(repo)
	if err != nil {
		return "", err
	}
	if ref.Job == 0 {
		return "", ErrNoLog
	}
	return g.text(ctx, fmt.Sprintf("/repos/%s/actions/jobs/%d/logs", path, ref.Job))
}

func (g *github) MayTrigger(ctx context.Context, repo, user string) (bool, error) {
	return g.collaboratorWrites(ctx, repo, user, http.StatusNotFound)
}

// collaboratorWrites asks GitHub's or Gitea's collaborator permission
// API whether user writes to repo; an answer of one of the statuses
// refused is a no.
func (c *rest) collaboratorWrites(ctx context.Context, repo, user string, refused ...int) (bool, error) {
	path, err := splitRepo(repo)
	if err != nil {
		return false, err
	}
	var p struct {
		Permission string `json:"permission"`
	}
	err = c.do(ctx, "GET", fmt.Sprintf("/repos/%s/collaborators/%s/permission", path, pathEscape(user)), nil, &p)
	if slices.Contains(refused, StatusOf(err)) {
		return false, nil
	}
	return err == nil && permissionWrites(p.Permission), err
}

// Gitea: the API v1 (/api/swagger).

// Pull reads a Gitea pull request; Gitea's shape is GitHub's, but
// mergeable is always set, false while Gitea checks and for a
// work-in-progress pull (a "WIP:" or "[WIP]" title, Gitea's default
// prefixes), whose conflict is then not known: Conflict stays false.
func (g *gitea) Pull(ctx context.Context, repo string, number int) (Pull, error) {
	path, err := splitRepo(repo)
	if err != nil {
		return Pull{}, err
	}
	var p struct {
		githubPullState
		Title string `json:"title"`
	}
	if err := g.do(ctx, "GET", fmt.Sprintf("/repos/%s/pulls/%d", path, number), nil, &p); err != nil {
		return Pull{}, err
	}
	out := p.pull()
	if t := strings.ToUpper(p.Title); strings.HasPrefix(t, "WIP:") || strings.HasPrefix(t, "[WIP]") {
		out.Conflict = false
	}
	return out, nil
}

func (g *gitea) ReviewComments(ctx context.Context, repo string, number int, review int64) ([]ReviewComment, error) {
	path, err := splitRepo(repo)
	if err != nil {
		return nil, err
	}
	if review == 0 {
		var reviews []struct {
			ID int64 `json:"id"`
		}
		if err := g.do(ctx, "GET", fmt.Sprintf("/repos/%s/pulls/%d/reviews?limit=50", path, number), nil, &reviews); err != nil {
			return nil, err
		}
		if len(reviews) == 0 {
			return nil, nil
		}
		review = reviews[len(reviews)-1].ID
	}
	var cs []struct {
		Path             string `json:"path"`
		Position         int    `json:"position"`
		OriginalPosition int    `json:"original_position"`
		Body             string `json:"body"`
	}
	if err := g.do(ctx, "GET", fmt.Sprintf("/repos/%s/pulls/%d/reviews/%d/comments", path, number, review), nil, &cs); err != nil {
		return nil, err
	}
	out := make([]ReviewComment, len(cs))
	for i, c := range cs {
		out[i] = ReviewComment{Path: c.Path, Line: c.Position, Body: c.Body}
		if c.Position == 0 {
			out[i].Line = c.OriginalPosition
		}
	}
	return out, nil
}

// JobLog reads a Gitea Actions job's log by id, or a commit status's
// target URL on the forge's own origin (such as a raw file a CI left).
func (g *gitea) JobLog(ctx context.Context, repo string, ref LogRef) (string, error) {
	path, err := splitRepo(repo)
	if err != nil {
		return "", err
	}
	switch {
	case ref.Job != 0:
		return g.text(ctx, fmt.Sprintf("/repos/%s/actions/jobs/%d/logs", path, ref.Job))
	case ref.URL != "" && g.sameOrigin(ref.URL):
		return g.text(ctx, ref.URL)
	}
	return "", ErrNoLog
}

func (g *gitea) MayTrigger(ctx context.Context, repo, user string) (bool, error) {
	return g.collaboratorWrites(ctx, repo, user, http.StatusNotFound, http.StatusForbidden)
}

// GitLab: docs.gitlab.com/api/merge_requests, api/notes, api/jobs,
// api/members.

func (g *gitlab) Pull(ctx context.Context, repo string, number int) (Pull, error) {
	var mr struct {
		IID                 int    `json:"iid"`
		State               string `json:"state"`
		TargetBranch        string `json:"target_branch"`
		SourceBranch        string `json:"source_branch"`
		SHA                 string `json:"sha"`
		HasConflicts        bool   `json:"has_conflicts"`
		DetailedMergeStatus string `json:"detailed_merge_status"`
	}
	if err := g.do(ctx, "GET", fmt.Sprintf("%s/merge_requests/%d", projectPath(repo), number), nil, &mr); err != nil {
		return Pull{}, err
	}
	p := Pull{Number: mr.IID, State: mr.State, Base: mr.TargetBranch, Head: mr.SourceBranch, HeadSHA: mr.SHA,
		Conflict: mr.HasConflicts || mr.DetailedMergeStatus == "conflict",
		Checking: mr.DetailedMergeStatus == "checking" || mr.DetailedMergeStatus == "unchecked" || mr.DetailedMergeStatus == "preparing"}
	switch mr.State {
	case "opened", "locked":
		p.State = PullOpen
	case "merged":
		p.State = PullMerged
	default:
		p.State = PullClosed
	}
	return p, nil
}

func (g *gitlab) ReviewComments(ctx context.Context, repo string, number int, _ int64) ([]ReviewComment, error) {
	var notes []struct {
		Type       string `json:"type"`
		Body       string `json:"body"`
		Resolvable bool   `json:"resolvable"`
		Resolved   bool   `json:"resolved"`
		Position   *struct {
			NewPath string `json:"new_path"`
			NewLine *int   `json:"new_line"`
			OldLine *int   `json:"old_line"`
		} `json:"position"`
	}
	q := url.Values{"sort": {"asc"}, "per_page": {"100"}}
	if err := g.do(ctx, "GET", fmt.Sprintf("%s/merge_requests/%d/notes?%s", projectPath(repo), number, q.Encode()), nil, &notes); err != nil {
		return nil, err
	}
	var out []ReviewComment
	for _, n := range notes {
		if n.Type != "DiffNote" || n.Position == nil || n.Resolved {
			continue
		}
		c := ReviewComment{Path: n.Position.NewPath, Body: n.Body}
		if n.Position.NewLine != nil {
			c.Line = *n.Position.NewLine
		} else if n.Position.OldLine != nil {
			c.Line = *n.Position.OldLine
		}
		out = append(out, c)
	}
	return out, nil
}

func (g *gitlab) JobLog(ctx context.Context, repo string, ref LogRef) (string, error) {
	if ref.Job == 0 {
		return "", ErrNoLog
	}
	return g.text(ctx, fmt.Sprintf("%s/jobs/%d/trace", projectPath(repo), ref.Job))
}

// gitlabDeveloper is GitLab's Developer access level, the least that
// pushes.
const gitlabDeveloper = 30

func (g *gitlab) MayTrigger(ctx context.Context, repo, user string) (bool, error) {
	var m struct {
		AccessLevel int `json:"access_level"`
	}
	err := g.do(ctx, "GET", fmt.Sprintf("%s/members/all/%s", projectPath(repo), pathEscape(user)), nil, &m)
	if StatusOf(err) == http.StatusNotFound {
		return false, nil
	}
	return err == nil && m.AccessLevel >= gitlabDeveloper, err
}

type ghComment struct {
	Body string `json:"body"`
	User struct {
		Login string `json:"login"`
	} `json:"user"`
}

func ghComments(cs []ghComment) []Comment {
	out := make([]Comment, len(cs))
	for i, c := range cs {
		out[i] = Comment{Author: c.User.Login, Body: c.Body}
	}
	return out
}

func (g *github) IssueComments(ctx context.Context, repo string, number int) ([]Comment, error) {
	return g.ghIssueComments(ctx, repo, number, "per_page=100")
}

func (g *gitea) IssueComments(ctx context.Context, repo string, number int) ([]Comment, error) {
	return g.ghIssueComments(ctx, repo, number, "limit=100")
}

// ghIssueComments reads the comments of an issue of GitHub or Gitea,
// whose shapes are the same; query names the page size.
func (c *rest) ghIssueComments(ctx context.Context, repo string, number int, query string) ([]Comment, error) {
	path, err := splitRepo(repo)
	if err != nil {
		return nil, err
	}
	var cs []ghComment
	err = c.do(ctx, "GET", fmt.Sprintf("/repos/%s/issues/%d/comments?%s", path, number, query), nil, &cs)
	return ghComments(cs), err
}

func (g *gitlab) IssueComments(ctx context.Context, repo string, number int) ([]Comment, error) {
	var notes []struct {
		Body   string `json:"body"`
		System bool   `json:"system"`
		Author struct {
			Username string `json:"username"`
		} `json:"author"`
	}
	q := url.Values{"sort": {"asc"}, "per_page": {"100"}}
	if err := g.do(ctx, "GET", fmt.Sprintf("%s/issues/%d/notes?%s", projectPath(repo), number, q.Encode()), nil, &notes); err != nil {
		return nil, err
	}
	var out []Comment
	for _, n := range notes {
		if !n.System {
			out = append(out, Comment{Author: n.Author.Username, Body: n.Body})
		}
	}
	return out, nil
}
