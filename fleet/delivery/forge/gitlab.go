package forge

import (
	"context"
	"net/url"
	"strings"
)

// gitlab speaks the GitLab REST API v4 (docs.gitlab.com/api/merge_requests).
type gitlab struct{ *rest }

type gitlabMR struct {
	IID    int    `json:"iid"`
	WebURL string `json:"web_url"`
}

func projectPath(repo string) string { return "/projects/" + url.PathEscape(repo) }

// Find lists the open merge requests from branch.
func (g *gitlab) Find(ctx context.Context, repo, branch string) (Request, bool, error) {
	q := url.Values{"state": {"opened"}, "source_branch": {branch}}
	var mrs []gitlabMR
	if err := g.do(ctx, "GET", projectPath(repo)+"/merge_requests?"+q.Encode(), nil, &mrs); err != nil {
		return Request{}, false, err
	}
	if len(mrs) == 0 {
		return Request{}, false, nil
	}
	return Request{Number: mrs[0].IID, URL: mrs[0].WebURL}, true, nil
}

// Open creates the merge request; a draft's title starts with "Draft: ".
func (g *gitlab) Open(ctx context.Context, repo string, n NewRequest) (Request, error) {
	title := n.Title
	if n.Draft {
		title = "Draft: " + title
	}
	body := map[string]any{"source_branch": n.Head, "target_branch": n.Base, "title": title, "description": n.Body}
	if len(n.Labels) > 0 {
		body["labels"] = strings.Join(n.Labels, ",")
	}
	var mr gitlabMR
	if err := g.do(ctx, "POST", projectPath(repo)+"/merge_requests", body, &mr); err != nil {
		return Request{}, err
	}
	return Request{Number: mr.IID, URL: mr.WebURL}, nil
}
