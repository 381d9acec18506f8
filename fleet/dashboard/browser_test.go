package dashboard_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/api"
	"github.com/agentfleet/agentfleet/fleet/dev"
	"github.com/agentfleet/agentfleet/internal/testenv"
	"github.com/agentfleet/agentfleet/store"

	"github.com/chromedp/chromedp"

	"github.com/agentfleet/agentfleet/queue/embedded"
)

// browserWait bounds the whole browser session; every wait inside is a DOM
// condition, so a slow machine only makes it slower.
const browserWait = 3 * time.Minute

// chromium finds Debian's chromium, or skips (fails under
// AGENTFLEET_REQUIRE_INTEGRATION=1).
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	testenv.SkipOrFatal(t, "chromium is not installed (apt-get install -y chromium); skipping the browser test")
	return ""
}

// browserPlan scripts the simulated model for the two tasks the test
// submits: one that runs a tool and answers, one that runs a long command
// so it can be steered and cancelled while it runs.
func browserPlan() dev.SimPlan {
	shell := func(cmd string) []dev.SimCall {
		args, _ := json.Marshal(map[string]string{"command": cmd})
		return []dev.SimCall{{Name: "shell", Args: args}}
	}
	return dev.SimPlan{Tasks: []dev.SimTask{
		{Match: "browser-hello", Steps: []dev.SimStep{
			{Text: "Let me run a command.", Calls: shell("echo hello-from-the-tool")},
			{Text: "The command said hello. Done."},
		}},
		{Match: "browser-child", Steps: []dev.SimStep{
			{Text: "Child here.", Calls: shell("echo child-was-here")},
			{Text: "The child is done."},
		}},
		{Match: "browser-fanout", Steps: []dev.SimStep{
			{Text: "Handing this to a subagent.", Calls: []dev.SimCall{{Name: "spawn_agent", Args: json.RawMessage(`{"task":"browser-child: say you were here"}`)}}},
			{Text: "Waiting for it.", Calls: []dev.SimCall{{Name: "wait", Args: json.RawMessage(`{"agent_id":"{{agent:0}}"}`)}}},
			{Text: "The subagent finished."},
		}},
		{Match: "browser-approve", Steps: []dev.SimStep{
			{Text: "Forcing the push.", Calls: shell("git push --force origin nothing 2>/dev/null; echo approved-and-ran")},
			{Text: "Pushed."},
		}},
		{Match: "browser-deliver", Steps: []dev.SimStep{
			{Text: "Writing the fix.", Calls: shell("echo fixed > fixed.txt")},
			{Text: "Fixed it."},
		}},
		{Match: "browser-slow", Steps: []dev.SimStep{
			{Text: "Starting a long job.", Calls: shell("sleep 600")},
			{Text: "The long job ended."},
		}},
	}}
}

// TestDashboardInBrowser drives the dashboard of a dev-mode fleet in a real
// headless Chromium: load it, submit a task and watch its events arrive,
// reload and see them replayed, read the usage panel, steer and cancel a
// running task, and save screenshots.
func TestDashboardInBrowser(t *testing.T) {
	bin := chromium(t)
	fl := startDev(t, dev.Config{Plan: browserPlan()})

	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(bin),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1440, 960),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true), // CI runs as root
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancelBrowser := chromedp.NewContext(allocCtx, chromedp.WithLogf(t.Logf))
	defer cancelBrowser()
	ctx, cancel := context.WithTimeout(ctx, browserWait)
	defer cancel()

	run := func(step string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, actions...); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
	}
	text := func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.TextContent(css(sel)))
		if err != nil {
			t.Fatalf("reading %s: %v", sel, err)
		}
		return s
	}
	eval := func(expr string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Evaluate[string](expr))
		if err != nil {
			t.Fatalf("evaluating %s: %v", expr, err)
		}
		return s
	}

	run("load the dashboard",
		chromedp.Navigate(fl.DashboardURL()), // the token once, in the fragment
		chromedp.WaitVisible(css(`#counts .count[data-state="all"]`)),
		chromedp.WaitVisible(css(`#conn[data-live="true"]`)))
	if href := eval(`location.href`); strings.Contains(href, fl.Token()) || strings.Contains(href, "token") {
		t.Fatalf("the token stays in the address bar: %s", href)
	}

	// Submit a task and watch its events arrive live.
	submit := func(prompt string) string {
		t.Helper()
		run("submit "+prompt,
			chromedp.Click(css(`#submit-box summary`)),
			chromedp.WaitVisible(css(`#submit-prompt`)),
			chromedp.SetValue(css(`#submit-prompt`), prompt),
			chromedp.Click(css(`#submit-button`)),
			chromedp.WaitVisible(css(`#detail`)),
			until(`location.hash.length > 10 && document.querySelector('#detail-title').textContent.includes(`+jsString(prompt)+`)`),
			chromedp.Click(css(`#submit-box summary`))) // close the form again
		hash := eval(`location.hash`)
		id := strings.TrimPrefix(hash, "#task=")
		if len(id) != 36 {
			t.Fatalf("the page did not select the submitted task: hash %q", hash)
		}
		return id
	}
	hello := submit("browser-hello: run one command and say hello")
	run("watch the events of the hello task",
		chromedp.WaitVisible(css(`#events .ev[data-kind="USER_INPUT"]`)),
		chromedp.WaitVisible(css(`#events .ev.tool[data-kind="TOOL_CALL_END"]`)),
		chromedp.WaitVisible(css(`#events .ev[data-kind="SESSION_END"]`)),
		chromedp.WaitVisible(css(`#detail[data-state="succeeded"]`)))
	if output := text(`#events .ev.tool .out`); !strings.Contains(output, "hello-from-the-tool") {
		t.Errorf("the tool output shown is %q, want the command's output", output)
	}
	if args := text(`#events .ev.tool .args`); !strings.Contains(args, "echo hello-from-the-tool") {
		t.Errorf("the tool call's arguments shown are %q", args)
	}

	// Reload: the events are replayed from the stream.
	run("reload and replay",
		chromedp.Reload(),
		chromedp.WaitVisible(css(`#detail[data-state="succeeded"]`)),
		chromedp.WaitVisible(css(`#events .ev.tool[data-kind="TOOL_CALL_END"]`)),
		chromedp.WaitVisible(css(`#events [data-kind="end"]`)))
	run("stored turns",
		chromedp.Click(css(`.tab[data-tab="turns"]`)),
		chromedp.WaitVisible(css(`#turns .ev[data-kind="turn-assistant"]`)),
		chromedp.WaitVisible(css(`#turns .ev[data-kind="turn-tool_results"]`)),
		chromedp.Click(css(`.tab[data-tab="events"]`)))

	// The usage panel sums the finished task's tokens by model.
	run("usage panel",
		chromedp.Click(css(`#usage-box summary`)),
		chromedp.WaitVisible(css(`#usage-table tr.total`)),
		until(`document.querySelectorAll('#usage-table tbody tr').length >= 2 && document.querySelector('#usage-total').textContent.includes('$')`),
		chromedp.WaitVisible(css(`#budget-empty`)))
	if total := text(`#usage-table tr.total`); !strings.Contains(total, "total") {
		t.Errorf("the usage total row reads %q", total)
	}
	// The simulated model has no price: its spend reads as unknown, not $0.
	run("unpriced spend", chromedp.WaitVisible(css(`#usage-unpriced`)))
	if note := text(`#usage-unpriced`); !strings.Contains(note, "simulated") || !strings.Contains(note, "prices.<model>") {
		t.Errorf("the unpriced note reads %q", note)
	}
	saveScreenshot(t, ctx, "dashboard-usage.png")
	run("close the usage panel", chromedp.Click(css(`#usage-box summary`)))

	// A task with a subagent: the tree shows the parent and its child.
	submit("browser-fanout: delegate to a subagent")
	run("watch the fan-out task",
		chromedp.WaitVisible(css(`#events .ev[data-kind="PARKED"]`)),
		chromedp.WaitVisible(css(`#detail[data-state="succeeded"]`)),
		chromedp.WaitVisible(css(`#tree > li > ul > li > a`)))
	// The tree refreshes after the parent's end; wait for the child's state there.
	run("the tree shows the child's end",
		until(`[...document.querySelectorAll('#tree > li > ul > li > a')].some(a => a.textContent.includes('browser-child') && a.textContent.includes('succeeded'))`))
	if child := text(`#tree > li > ul > li > a`); !strings.Contains(child, "browser-child") || !strings.Contains(child, "succeeded") {
		t.Errorf("the task tree shows the child as %q", child)
	}
	saveScreenshot(t, ctx, "dashboard-tree.png")

	// A destructive command parks its task; Approve on the pending call
	// resumes it and the command runs.
	submit("browser-approve: force the push")
	run("approve the pending call",
		chromedp.WaitVisible(css(`#detail[data-state="waiting"]`)),
		chromedp.WaitVisible(css(`#detail-approvals .approval button.approve`)),
		chromedp.WaitVisible(css(`#events .ev[data-kind="APPROVAL_REQUESTED"]`)))
	if what := text(`#detail-approvals .approval`); !strings.Contains(what, "destructive: force push") || !strings.Contains(what, "git push --force") {
		t.Errorf("the pending call shows %q", what)
	}
	saveScreenshot(t, ctx, "dashboard-approval.png")
	run("the approved call runs",
		chromedp.Click(css(`#detail-approvals .approval button.approve`)),
		chromedp.WaitVisible(css(`#detail[data-state="succeeded"]`)),
		until(`[...document.querySelectorAll('#events .ev.tool .out')].some(e => e.textContent.includes('approved-and-ran'))`))

	// A task with a check and a delivery: the detail lists the check runs
	// and the branch, and the events show them.
	delivered := submitDelivery(t, fl)
	eval(`location.hash = "task=` + delivered + `"; location.hash`)
	run("open the delivered task",
		until(`document.querySelector('#detail-title').textContent.includes("browser-deliver")`),
		chromedp.WaitVisible(css(`#detail[data-state="succeeded"]`)))
	run("its checks and delivery", chromedp.WaitVisible(css(`#detail-outcome`)))
	run("their events",
		chromedp.WaitVisible(css(`#events .ev[data-kind="CHECK_END"]`)),
		chromedp.WaitVisible(css(`#events .ev[data-kind="DELIVERY"]`)))
	if outcome := text(`#detail-outcome`); !strings.Contains(outcome, "checks: fixed") || !strings.Contains(outcome, "fixed after: passed") ||
		!strings.Contains(outcome, "branch agentfleet/"+delivered) || !strings.Contains(outcome, "pushed") {
		t.Errorf("the task's checks and delivery are shown as %q", outcome)
	}

	// A running task: steer it, then cancel it.
	slow := submit("browser-slow: run the long job")
	run("wait until the long job runs",
		chromedp.WaitVisible(css(`#events .ev.tool[data-kind="TOOL_CALL_START"]`)),
		chromedp.WaitVisible(css(`#detail[data-state="running"]`)),
		chromedp.WaitEnabled(css(`#steer-button`)))
	// The stream drops: the browser's own retry would present its spent
	// ticket, so the page reopens it with a new ticket after the last event
	// it had. Nothing is shown twice, and what follows still arrives.
	inputs := eval(`String(document.querySelectorAll('#events .ev[data-kind="USER_INPUT"]').length)`)
	eval(`const dropped = ui.stream; dropped.close(); dropped.onerror(); "dropped"`)
	run("the stream is reopened with a new ticket",
		until(`ui.stream !== null && ui.stream.readyState === EventSource.OPEN && ui.stream.url.includes("ticket=") && ui.stream.url.includes("from=")`))
	if again := eval(`String(document.querySelectorAll('#events .ev[data-kind="USER_INPUT"]').length)`); again != inputs {
		t.Errorf("after the stream was reopened the page shows %s user inputs, before %s", again, inputs)
	}
	if u := eval(`ui.stream.url`); strings.Contains(u, fl.Token()) {
		t.Errorf("the event stream's URL carries the token: %s", u)
	}
	run("steer",
		chromedp.SetValue(css(`#control-message`), "please hurry up"),
		chromedp.Click(css(`#steer-button`)),
		until(`document.querySelector('#toast').textContent.includes('steering sent')`))
	saveScreenshot(t, ctx, "dashboard.png")

	run("cancel",
		chromedp.Click(css(`#cancel-button`)),
		chromedp.WaitVisible(css(`#detail[data-state="cancelled"]`)),
		chromedp.WaitVisible(css(`#events [data-kind="end"]`)), // through the reopened stream
		chromedp.WaitVisible(css(`#task-list .task[data-id="`+slow+`"][data-state="cancelled"]`)))
	// The list re-renders as events arrive: wait for it rather than read it once.
	run("the list shows the succeeded task "+hello,
		until(`document.querySelectorAll('#task-list .task[data-id="`+hello+`"][data-state="succeeded"]').length === 1`))
}

// saveScreenshot saves the page as a PNG in $AGENTFLEET_SCREENSHOT_DIR when
// set (to keep it), else in the test's temporary directory, and logs where.
func saveScreenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	dir := os.Getenv("AGENTFLEET_SCREENSHOT_DIR")
	if dir == "" {
		dir = t.TempDir()
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)) // quality 100: PNG
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot of the dashboard: %s", path)
}

func css(sel string) chromedp.CSS { return chromedp.CSS(sel) }

// until polls predicate, a JavaScript expression, until it is true, for
// at most browserWait.
func until(predicate string) chromedp.Action[chromedp.Void] {
	return void(chromedp.Poll[bool](predicate, chromedp.WithPollingTimeout(browserWait)))
}

// void drops an action's value.
func void[T any](a chromedp.Action[T]) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		_, err := a(ctx, t)
		return chromedp.Void{}, err
	}
}

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// submitDelivery submits, through the API, a task with a check (failing
// before the agent starts) and a delivery to a bare repository, and
// returns its id.
func submitDelivery(t *testing.T, fl *dev.Fleet) string {
	t.Helper()
	root := t.TempDir()
	bare := filepath.Join(root, "origin.git")
	for _, args := range [][]string{
		{"init", "--quiet", "--initial-branch=main", filepath.Join(root, "seed")},
		{"-C", filepath.Join(root, "seed"), "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "--quiet", "--allow-empty", "-m", "first"},
		{"clone", "--quiet", "--bare", filepath.Join(root, "seed"), bare},
	} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	c, err := fl.Client()
	if err != nil {
		t.Fatal(err)
	}
	spec := fleet.TaskSpec{Prompt: "browser-deliver: write the fix", Environment: fleet.Environment{Repo: bare},
		Verification: fleet.Verification{Checks: []fleet.Check{{Name: "fixed", Command: "test -f fixed.txt"}}, ChecksBefore: true},
		Delivery:     &fleet.Delivery{}}
	res, err := c.Submit(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	var last api.TaskView
	testenv.Eventually(t, browserWait, "the delivered task to end", func() bool {
		last, err = c.Get(context.Background(), res.Task.ID)
		return err == nil && last.State.Terminal()
	})
	if last.State != store.TaskSucceeded {
		t.Fatalf("the delivered task %s (%s): %s", last.State, last.Error, last.Result)
	}
	return res.Task.ID.String()
}

// startDev starts dev mode for a browser test from cfg, on free ports in
// a temporary directory and with no provider key from the environment
// (so the simulated model answers); the test's cleanup closes it.
func startDev(t *testing.T, cfg dev.Config) *dev.Fleet {
	t.Helper()
	cfg.Addr, cfg.NATSPort, cfg.DataDir = "127.0.0.1:0", embedded.RandomPort, t.TempDir()
	cfg.Getenv = func(string) string { return "" }
	fl, err := dev.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fl.Close() })
	return fl
}
