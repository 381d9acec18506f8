// Package browsertest drives one headless Chromium for the tests that
// check the dashboard in a real browser, logged in through the real
// OpenID provider (internal/giteatest): the single sign-on test in
// internal/oidcauth and the trust boundary suite in fleet/fleettest/trust.
// It is for tests only; no program imports it.
package browsertest

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/agentfleet/agentfleet/internal/testenv"
)

// StepWait bounds one step in the browser, so that a stuck step leaves
// time to say where the page is.
const StepWait = time.Minute

// Chromium finds Debian's chromium (or another Chromium), or skips the
// test with why (fails under AGENTFLEET_REQUIRE_INTEGRATION=1).
func Chromium(t testing.TB, why string) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	testenv.SkipOrFatal(t, "chromium is not installed (apt-get install -y chromium); skipping "+why)
	return ""
}

// Browser is one headless Chromium with a profile of its own, on the
// dashboard at Base.
type Browser struct {
	Ctx  context.Context // lives for the browser's life
	Base string          // the dashboard's URL
}

// New starts Chromium bin for the dashboard at base, for at most life;
// the test's cleanup stops it.
func New(t testing.TB, bin, base string, life time.Duration) *Browser {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(bin), chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 900),
		chromedp.Flag("headless", true), chromedp.Flag("no-sandbox", true), // CI runs as root
		chromedp.Flag("disable-gpu", true), chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-dev-shm-usage", true),
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelBrowser := chromedp.NewContext(allocCtx, chromedp.WithLogf(t.Logf))
	ctx, cancel := context.WithTimeout(ctx, life)
	t.Cleanup(func() { cancel(); cancelBrowser(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil { // start it on ctx, not on a step's
		t.Fatalf("starting chromium: %v", err)
	}
	return &Browser{Ctx: ctx, Base: base}
}

// Run does the actions of step within StepWait, failing with where the
// page is and what it reads.
func (b *Browser) Run(t testing.TB, step string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.Ctx, StepWait)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		where, _ := chromedp.Run(b.Ctx, chromedp.Location())
		page, _ := chromedp.Run(b.Ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText.slice(0, 2000) : ""`))
		t.Fatalf("%s: %v\nthe page at %s reads:\n%s", step, err, where, page)
	}
}

// Text is the trimmed text of the element sel selects.
func (b *Browser) Text(t testing.TB, sel string) string {
	t.Helper()
	s, err := chromedp.Run(b.Ctx, chromedp.TextContent(chromedp.CSS(sel)))
	if err != nil {
		t.Fatalf("reading %s: %v", sel, err)
	}
	return strings.TrimSpace(s)
}

// LoginWithGitea opens the dashboard, follows its single sign-on link to
// Gitea, signs in there as user, authorizes the application and waits
// for the dashboard to name the user.
func (b *Browser) LoginWithGitea(t testing.TB, user, password string) {
	t.Helper()
	b.Run(t, user+" opens the dashboard, not logged in",
		chromedp.Navigate(b.Base+"/"),
		chromedp.WaitVisible(chromedp.CSS(`#sso-login`)))
	b.Run(t, user+" follows the single sign-on link to gitea and signs in",
		chromedp.Click(chromedp.CSS(`#sso-login`)),
		chromedp.WaitVisible(chromedp.CSS(`#user_name`)),
		chromedp.SetValue(chromedp.CSS(`#user_name`), user),
		chromedp.SetValue(chromedp.CSS(`#password`), password),
		chromedp.Submit(chromedp.CSS(`#password`)),
		chromedp.WaitVisible(chromedp.CSS(`#authorize-app`)),
		chromedp.Click(chromedp.CSS(`#authorize-app`)),
		chromedp.WaitVisible(chromedp.CSS(`#whoami`)))
}
