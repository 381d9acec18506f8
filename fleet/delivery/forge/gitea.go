package forge

import (
	"context"
	"fmt"
	"net/url"
	"strings"
)

// gitea speaks the Gitea (and Forgejo) REST API v1
// (/api/swagger of a Gitea server).
type gitea struct{ *rest }

type giteaPull struct {
	Number  int    `json:"number"`
	HTMLURL string `json:"html_url"`
	Head    struct {
		Ref string `json:"ref"`
	} `json:"head"`
}

// giteaPageSize is the page size of the listings read.
const giteaPageSize = 50

// Find pages through the open pulls for the one whose head is branch.
func (g *gitea) Find(ctx context.Context, repo, branch string) (Request, bool, error) {
	path, err := splitRepo(repo)
	if err != nil {
		return Request{}, false, err
	}
	for page := 1; page <= 20; page++ {
		q := url.Values{"state": {"open"}, "page": {fmt.Sprint(page)}, "limit": {fmt.Sprint(giteaPageSize)}}
		var pulls []giteaPull
		if err := g.do(ctx, "GET", "/repos/"+path+"/pulls?"+q.Encode(), nil, &pulls); err != nil {
			return Request{}, false, err
		}
		for _, p := range pulls {
			if p.Head.Ref == branch {
				return Request{Number: p.Number, URL: p.HTMLURL}, true, nil
			}
		}
		if len(pulls) < giteaPageSize {
			break
		}
	}
	return Request{}, false, nil
}

// Open creates the pull with its labels (by id); a draft's title starts
// with "WIP: ".
func (g *gitea) Open(ctx context.Context, repo string, n NewRequest) (Request, error) {
	path, err := splitRepo(repo)
	if err != nil {
		return Request{}, err
	}
	title := n.Title
	if n.Draft {
		title = "WIP: " + title
	}
	body := map[string]any{"head": n.Head, "base": n.Base, "title": title, "body": n.Body}
	if len(n.Labels) > 0 {
		ids, err := g.labelIDs(ctx, path, n.Labels)
		if err != nil {
			return Request{}, err
		}
		body["labels"] = ids
	}
	var p giteaPull
	if err := g.do(ctx, "POST", "/repos/"+path+"/pulls", body, &p); err != nil {
		return Request{}, err
	}
	return Request{Number: p.Number, URL: p.HTMLURL}, nil
}

// labelIDs resolves label names to the repository's label ids.
func (g *gitea) labelIDs(ctx context.Context, path string, names []string) ([]int64, error) {
	var labels []struct {
		ID   int64  `json:"id"`
		Name string `json:"name"`
	}
	if err := g.do(ctx, "GET", "/repos/"+path+"/labels?limit=100", nil, &labels); err != nil {
		return nil, err
	}
	var ids []int64
	var missing []string
	for _, n := range names {
		found := false
		for _, l := range labels {
			if strings.EqualFold(l.Name, n) {
				ids, found = append(ids, l.ID), true
				break
			}
		}
		if !found {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%s: the repository has no label %s; create it or drop it from pull_request.labels", g.kind, strings.Join(missing, ", "))
	}
	return ids, nil
}
