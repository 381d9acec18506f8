package delivery_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/delivery"
	"github.com/agentfleet/agentfleet/fleet/fleettest"
	"github.com/agentfleet/agentfleet/fleet/worker"
	"github.com/agentfleet/agentfleet/internal/giteatest"
	"github.com/agentfleet/agentfleet/store"
)

func TestGiteaPullRequest(t *testing.T) {
	g := giteatest.Start(t)
	const giteaAdmin = giteatest.Admin
	g.API(t, "POST", "/user/repos", `{"name":"hello","auto_init":true,"readme":"Default","default_branch":"main"}`, nil)
	g.API(t, "POST", "/repos/"+giteaAdmin+"/hello/labels", `{"name":"agentfleet","color":"#00aabb"}`, nil)
	tok := tokenFile(t, g.Token)
	host := strings.TrimPrefix(g.URL, "http://")
	f := fleettest.Start(t, fleettest.Options{Workers: 1, SQLite: true, Worker: func(_ int, c *worker.Config) {
		c.Delivery.Tokens = map[string]delivery.Token{"gitea": {TokenFile: tok, Username: giteaAdmin, Forge: "gitea",
			APIURL: g.URL + "/api/v1", Hosts: []string{host}}}
		c.Policy.Repositories.Allow = []string{g.URL + "/"} // its http:// on loopback, named by the operator
		c.Policy.Repositories.AllowPrivate = []string{"127.0.0.0/8", "::1"}
		c.OutboundAllowPrivate = []string{"127.0.0.1"} // the Gitea is on loopback, as a self-hosted one is on a private network
	}})
	spec := fleettest.Spec("fix the readme",
		step{Calls: []fleettest.Call{fleettest.Shell("printf '\\nFixed by agentfleet.\\n' >> README.md")}},
		step{Text: "Say who fixed the README\n\nThe README now says it was fixed."})
	spec.Environment = fleet.Environment{Repo: g.URL + "/" + giteaAdmin + "/hello.git"}
	spec.Checks = []fleet.Check{{Name: "readme", Command: "grep -q 'Fixed by agentfleet' README.md"}}
	spec.Delivery = &fleet.Delivery{Credentials: fleet.DeliveryCredentials{Token: "gitea"},
		PullRequest: &fleet.PullRequest{Labels: []string{"agentfleet"}}}
	id := f.Submit(spec)
	task := f.WaitDone(id)
	res := fleettest.Result(t, task)
	if task.State != store.TaskSucceeded {
		t.Fatalf("state %s (%s): %s", task.State, task.Error, res.Error)
	}
	d := res.Delivery
	if d == nil || !d.Pushed || d.RequestNumber == 0 || !strings.HasPrefix(d.RequestURL, g.URL) {
		t.Fatalf("delivery %+v", d)
	}
	var pr struct {
		Title string `json:"title"`
		Body  string `json:"body"`
		State string `json:"state"`
		Head  struct {
			Ref string `json:"ref"`
			Sha string `json:"sha"`
		} `json:"head"`
		Base struct {
			Ref string `json:"ref"`
		} `json:"base"`
		Labels []struct {
			Name string `json:"name"`
		} `json:"labels"`
	}
	g.API(t, "GET", fmt.Sprintf("/repos/%s/hello/pulls/%d", giteaAdmin, d.RequestNumber), "", &pr)
	if pr.State != "open" || pr.Head.Ref != d.Branch || pr.Head.Sha != d.Commit || pr.Base.Ref != "main" ||
		pr.Title != "Say who fixed the README" || !strings.Contains(pr.Body, "### Checks: passed") ||
		len(pr.Labels) != 1 || pr.Labels[0].Name != "agentfleet" {
		t.Errorf("pull request read back: %+v\nwant head %s at %s, base main, the answer's title, checks in the body, the label", pr, d.Branch, d.Commit)
	}
	var file struct {
		Content string `json:"content"`
	}
	g.API(t, "GET", "/repos/"+giteaAdmin+"/hello/contents/README.md?ref="+d.Branch, "", &file)
	if file.Content == "" {
		t.Error("README.md not found on the pushed branch")
	}
}
