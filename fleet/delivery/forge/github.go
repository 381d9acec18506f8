package forge

import (
	"context"
	"fmt"
	"net/url"
	"strings"
)

// github speaks the GitHub REST API (docs.github.com/rest/pulls).
type github struct{ *rest }

type githubPull struct {
	Number  int    `json:"number"`
	HTMLURL string `json:"html_url"`
}

// Find lists the open pulls whose head is owner:branch.
func (g *github) Find(ctx context.Context, repo, branch string) (Request, bool, error) {
	path, err := splitRepo(repo)
	if err != nil {
		return Request{}, false, err
	}
	owner, _, _ := strings.Cut(repo, "/")
	q := url.Values{"state": {"open"}, "head": {owner + ":" + branch}}
	var pulls []githubPull
	if err := g.do(ctx, "GET", "/repos/"+path+"/pulls?"+q.Encode(), nil, &pulls); err != nil {
		return Request{}, false, err
	}
	if len(pulls) == 0 {
		return Request{}, false, nil
	}
	return Request{Number: pulls[0].Number, URL: pulls[0].HTMLURL}, true, nil
}

// Open creates the pull, then adds its labels (a pull's labels are its
// issue's).
func (g *github) Open(ctx context.Context, repo string, n NewRequest) (Request, error) {
	path, err := splitRepo(repo)
	if err != nil {
		return Request{}, err
	}
	body := map[string]any{"title": n.Title, "head": n.Head, "base": n.Base, "body": n.Body, "draft": n.Draft}
	var p githubPull
	if err := g.do(ctx, "POST", "/repos/"+path+"/pulls", body, &p); err != nil {
		return Request{}, err
	}
	r := Request{Number: p.Number, URL: p.HTMLURL}
	if len(n.Labels) > 0 {
		err := g.do(ctx, "POST", fmt.Sprintf("/repos/%s/issues/%d/labels", path, p.Number), map[string]any{"labels": n.Labels}, nil)
		if err != nil {
			return r, fmt.Errorf("pull request #%d opened, but its labels were refused: %w", p.Number, err)
		}
	}
	return r, nil
}
