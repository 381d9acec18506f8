// Package giteatest runs the Gitea that .ci/gitea.sh builds, on SQLite
// on a loopback port, for integration tests that need a real forge or a
// real OpenID Connect provider (its OAuth2 applications issue ID tokens
// signed with RS256 keys it publishes at /login/oauth/keys).
//
// A test whose Gitea is missing is skipped with a message, and fails
// under AGENTFLEET_REQUIRE_INTEGRATION=1 (internal/testenv).
package giteatest

import (
	"context"
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

	"github.com/agentfleet/agentfleet/internal/testenv"
	"github.com/agentfleet/agentfleet/internal/tiedproc"
)

// Admin and AdminPassword are the site administrator Start creates.
const (
	Admin         = "fleetadmin"
	AdminPassword = "agentfleet-pass-1"
)

// Server is a running Gitea.
type Server struct {
	URL   string // http://127.0.0.1:port, no trailing slash
	Token string // an access token of Admin with every scope
	bin   string
	ini   string
	work  string
}

// Dir is where .ci/gitea.sh leaves Gitea's binary and source tree:
// AGENTFLEET_GITEA_DIR, or the user cache's agentfleet/gitea.
func Dir() string {
	if d := os.Getenv("AGENTFLEET_GITEA_DIR"); d != "" {
		return d
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(cache, "agentfleet", "gitea")
}

// Start runs Gitea with its OAuth2 provider on, creates Admin and a
// token of theirs, and waits until it answers; the test's cleanup stops
// it.
func Start(t testing.TB) *Server {
	t.Helper()
	dir := Dir()
	bin := filepath.Join(dir, "gitea")
	if _, err := os.Stat(bin); err != nil {
		testenv.SkipOrFatal(t, fmt.Sprintf("no Gitea at %s (build it with .ci/gitea.sh, about 7 minutes): %v", bin, err))
	}
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	port := freePort(t)
	s := &Server{URL: fmt.Sprintf("http://127.0.0.1:%d", port), bin: bin, ini: filepath.Join(work, "app.ini"), work: work}
	if err := os.WriteFile(s.ini, []byte(appINI(u.Username, work, port, filepath.Join(dir, "src"))), 0o600); err != nil {
		t.Fatal(err)
	}
	stubAssets(t, work)
	s.CLI(t, "migrate")
	s.CLI(t, "admin", "user", "create", "--admin", "--username", Admin, "--password", AdminPassword,
		"--email", "admin@example.invalid", "--must-change-password=false")
	s.Token = lastLine(s.CLI(t, "admin", "user", "generate-access-token", "--username", Admin, "--token-name", "fleet",
		"--scopes", "all", "--raw"))
	s.run(t)
	return s
}

// stubAssets writes empty stand-ins for the scripts Gitea's pages load:
// .ci/gitea.sh does not build the web assets, and a page whose index.js
// fails to load raises an alert that would stop a browser test. Gitea
// serves <work>/custom/public/assets before its own. The pages a test
// uses (sign-in, authorize) are plain HTML forms.
func stubAssets(t testing.TB, work string) {
	js := filepath.Join(work, "custom", "public", "assets", "js")
	if err := os.MkdirAll(js, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"index.js", "webcomponents.js"} {
		if err := os.WriteFile(filepath.Join(js, name), []byte("/* giteatest: the web assets are not built */\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func appINI(runUser, work string, port int, static string) string {
	return fmt.Sprintf(`APP_NAME = agentfleet test
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
ENABLED = true
JWT_SIGNING_ALGORITHM = RS256

[service]
DISABLE_REGISTRATION = true

[mailer]
ENABLED = false

[cron]
ENABLED = false

[indexer]
REPO_INDEXER_ENABLED = false

[webhook]
ALLOWED_HOST_LIST = loopback
DELIVER_TIMEOUT = 10

[log]
MODE = file
LEVEL = warn
ROOT_PATH = %[2]s/log
`, runUser, work, port, static)
}

// CLI runs a gitea subcommand on the server's configuration and returns
// its output.
func (s *Server) CLI(t testing.TB, args ...string) string {
	t.Helper()
	cmd := exec.Command(s.bin, append(args, "--config", s.ini, "--work-path", s.work)...)
	cmd.Dir = s.work
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("gitea %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// run starts `gitea web` and waits for /api/healthz.
func (s *Server) run(t testing.TB) {
	t.Helper()
	logf, err := os.Create(filepath.Join(s.work, "web.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(s.bin, "web", "--config", s.ini, "--work-path", s.work)
	cmd.Dir = s.work
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
	testenv.EventuallyErr(t, 2*time.Minute, "gitea to answer", func() error {
		select {
		case <-exited:
			b, _ := os.ReadFile(filepath.Join(s.work, "web.log"))
			t.Fatalf("gitea web exited:\n%s", b)
		default:
		}
		return testenv.AnswersOK(s.URL + "/api/healthz")
	})
}

// API calls Gitea's API (/api/v1 + path) with Admin's token, fails the
// test on a status other than 2xx, and decodes the answer into out
// unless it is nil.
func (s *Server) API(t testing.TB, method, path, body string, out any) {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), method, s.URL+"/api/v1"+path, strings.NewReader(body))
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

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

func freePort(t testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port
}
