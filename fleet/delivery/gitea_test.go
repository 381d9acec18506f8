package delivery_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/delivery"
	"github.com/agentfleet/agentfleet/fleet/fleettest"
	"github.com/agentfleet/agentfleet/fleet/worker"
	"github.com/agentfleet/agentfleet/internal/testenv"
	"github.com/agentfleet/agentfleet/internal/tiedproc"
	"github.com/agentfleet/agentfleet/store"
)

// giteaDir is where .ci/gitea.sh leaves Gitea's binary and source tree.
func giteaDir() string {
	if d := os.Getenv("AGENTFLEET_GITEA_DIR"); d != "" {
		return d
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(cache, "agentfleet", "gitea")
}

// giteaServer is a Gitea running on SQLite on a loopback port, with an
// admin and a token of theirs.
type giteaServer struct {
	URL   string // http://127.0.0.1:port
	User  string
	Token string
}

const giteaAdmin = "fleetadmin"

// startGitea runs the Gitea .ci/gitea.sh built, or skips (fails under
// AGENTFLEET_REQUIRE_INTEGRATION=1) when it is absent.
func startGitea(t *testing.T) *giteaServer {
	t.Helper()
	dir := giteaDir()
	bin := filepath.Join(dir, "gitea")
	if _, err := os.Stat(bin); err != nil {
		testenv.SkipOrFatal(t, fmt.Sprintf("no Gitea at %s (build it with .ci/gitea.sh, about 7 minutes): %v", bin, err))
	}
	work := t.TempDir()
	port := freePort(t)
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	ini := filepath.Join(work, "app.ini")
	conf := fmt.Sprintf(`APP_NAME = agentfleet test
RUN_MODE = prod
RUN_USER = %[1]s
WORK_PATH = %[2]s
I_AM_BEING_UNSAFE_RUNNING_AS_ROOT = true

[server]
PROTOCOL = http
HTTP_ADDR = 127.0.0.1
HTTP_PORT = %[3]d
ROOT_URL = http://127.0.0.1:%[3]d/
STATIC_ROOT_PATH = %[4]s
APP_DATA_PATH = %[2]s/data
DISABLE_SSH = true
OFFLINE_MODE = true
LFS_START_SERVER = false

[database]
DB_TYPE = sqlite3
PATH = %[2]s/gitea.db

[repository]
ROOT = %[2]s/repos
DEFAULT_BRANCH = main

[security]
INSTALL_LOCK = true
SECRET_KEY = agentfleet-test-secret-key-0123456789
INTERNAL_TOKEN = eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJuYmYiOjE3MDAwMDAwMDB9.agentfleet-test-internal-token

[oauth2]
ENABLED = false

[service]
DISABLE_REGISTRATION = true

[mailer]
ENABLED = false

[cron]
ENABLED = false

[indexer]
REPO_INDEXER_ENABLED = false

[log]
MODE = file
LEVEL = warn
ROOT_PATH = %[2]s/log
`, u.Username, work, port, filepath.Join(dir, "src"))
	if err := os.WriteFile(ini, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	gitea := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, append(args, "--config", ini, "--work-path", work)...)
		cmd.Dir = work
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("gitea %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	gitea("migrate")
	gitea("admin", "user", "create", "--admin", "--username", giteaAdmin, "--password", "agentfleet-pass-1",
		"--email", "admin@example.invalid", "--must-change-password=false")
	token := gitea("admin", "user", "generate-access-token", "--username", giteaAdmin, "--token-name", "fleet",
		"--scopes", "all", "--raw")
	token = lastLine(token)

	logf, err := os.Create(filepath.Join(work, "web.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "web", "--config", ini, "--work-path", work)
	cmd.Dir = work
	cmd.Stdout, cmd.Stderr = logf, logf
	exited, err := tiedproc.Start(cmd, syscall.SIGKILL, logf)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	})
	s := &giteaServer{URL: fmt.Sprintf("http://127.0.0.1:%d", port), User: giteaAdmin, Token: token}
	testenv.EventuallyErr(t, 2*time.Minute, "gitea to answer", func() error {
		select {
		case <-exited:
			b, _ := os.ReadFile(filepath.Join(work, "web.log"))
			t.Fatalf("gitea web exited:\n%s", b)
		default:
		}
		resp, err := http.Get(s.URL + "/api/healthz")
		if err != nil {
			return err
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("healthz: %s", resp.Status)
		}
		return nil
	})
	return s
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port
}

// api calls Gitea's API with the admin's token and decodes the answer.
func (s *giteaServer) api(t *testing.T, method, path, body string, out any) {
	t.Helper()
	req, err := http.NewRequest(method, s.URL+"/api/v1"+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "token "+s.Token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		t.Fatalf("gitea %s %s: %s: %s", method, path, resp.Status, raw)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("gitea %s %s: %v: %s", method, path, err, raw)
		}
	}
}

// TestGiteaPullRequest: on a real Gitea, a repository is created through
// its API; a task clones it, fixes its README, passes its check, pushes
// its branch over HTTP with the worker's token and opens the pull request,
// which the test reads back through the API.
func TestGiteaPullRequest(t *testing.T) {
	g := startGitea(t)
	g.api(t, "POST", "/user/repos", `{"name":"hello","auto_init":true,"readme":"Default","default_branch":"main"}`, nil)
	g.api(t, "POST", "/repos/"+giteaAdmin+"/hello/labels", `{"name":"agentfleet","color":"#00aabb"}`, nil)
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
	g.api(t, "GET", fmt.Sprintf("/repos/%s/hello/pulls/%d", giteaAdmin, d.RequestNumber), "", &pr)
	if pr.State != "open" || pr.Head.Ref != d.Branch || pr.Head.Sha != d.Commit || pr.Base.Ref != "main" ||
		pr.Title != "Say who fixed the README" || !strings.Contains(pr.Body, "### Checks: passed") ||
		len(pr.Labels) != 1 || pr.Labels[0].Name != "agentfleet" {
		t.Errorf("pull request read back: %+v\nwant head %s at %s, base main, the answer's title, checks in the body, the label", pr, d.Branch, d.Commit)
	}
	var file struct {
		Content string `json:"content"`
	}
	g.api(t, "GET", "/repos/"+giteaAdmin+"/hello/contents/README.md?ref="+d.Branch, "", &file)
	if file.Content == "" {
		t.Error("README.md not found on the pushed branch")
	}
}
