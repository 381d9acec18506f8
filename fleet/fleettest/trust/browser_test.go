package trust_test

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/agentfleet/agentfleet/internal/testenv"
)

// stepWait bounds one step in the browser, so that a stuck step leaves
// time to say where the page is.
const stepWait = time.Minute

// chromium finds Debian's chromium, or skips (fails under
// AGENTFLEET_REQUIRE_INTEGRATION=1).
func chromium(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	testenv.SkipOrFatal(t, "chromium is not installed (apt-get install -y chromium); skipping the trust boundary suite, whose dashboard part needs it")
	return ""
}

// browser is one headless Chromium with a profile of its own.
type browser struct {
	ctx  context.Context
	base string // the dashboard's URL
}

func newBrowser(t *testing.T, bin, base string) *browser {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(bin), chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 900),
		chromedp.Flag("headless", true), chromedp.Flag("no-sandbox", true), // CI runs as root
		chromedp.Flag("disable-gpu", true), chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-dev-shm-usage", true),
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelBrowser := chromedp.NewContext(allocCtx, chromedp.WithLogf(t.Logf))
	ctx, cancel := context.WithTimeout(ctx, wait)
	t.Cleanup(func() { cancel(); cancelBrowser(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil { // start it on ctx, not on a step's
		t.Fatalf("starting chromium: %v", err)
	}
	return &browser{ctx: ctx, base: base}
}

// run does the actions of step, failing with what the page reads.
func (b *browser) run(t *testing.T, step string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, stepWait)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		where, _ := chromedp.Run(b.ctx, chromedp.Location())
		page, _ := chromedp.Run(b.ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText.slice(0, 2000) : ""`))
		t.Fatalf("%s: %v\nthe page at %s reads:\n%s", step, err, where, page)
	}
}

func (b *browser) text(t *testing.T, sel string) string {
	t.Helper()
	s, err := chromedp.Run(b.ctx, chromedp.TextContent(chromedp.CSS(sel)))
	if err != nil {
		t.Fatalf("reading %s: %v", sel, err)
	}
	return strings.TrimSpace(s)
}

// eval runs a script in the page, awaiting its promise.
func eval[T any](t *testing.T, b *browser, what, script string) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, stepWait)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](script, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return v
}

// login opens the dashboard, follows its single sign-on link to Gitea,
// signs in there, authorizes the application and waits for the
// dashboard to name the user.
func (b *browser) login(t *testing.T, user string) {
	t.Helper()
	b.run(t, user+" opens the dashboard, not logged in",
		chromedp.Navigate(b.base+"/"),
		chromedp.WaitVisible(chromedp.CSS(`#sso-login`)))
	b.run(t, user+" follows the single sign-on link to gitea and signs in",
		chromedp.Click(chromedp.CSS(`#sso-login`)),
		chromedp.WaitVisible(chromedp.CSS(`#user_name`)),
		chromedp.SetValue(chromedp.CSS(`#user_name`), user),
		chromedp.SetValue(chromedp.CSS(`#password`), password),
		chromedp.Submit(chromedp.CSS(`#password`)),
		chromedp.WaitVisible(chromedp.CSS(`#authorize-app`)),
		chromedp.Click(chromedp.CSS(`#authorize-app`)),
		chromedp.WaitVisible(chromedp.CSS(`#whoami`)))
}
