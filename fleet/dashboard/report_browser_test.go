package dashboard_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/client"
	"github.com/agentfleet/agentfleet/fleet/dev"
	"github.com/agentfleet/agentfleet/fleet/report"
	"github.com/agentfleet/agentfleet/internal/testenv"
	"github.com/agentfleet/agentfleet/store"
)

// reportPlan scripts two outcomes: "report-pass" answers at once (it
// succeeds), "report-fail" runs a command first, which its max_turns of 1
// turns into a turn_limit failure.
// The demo backlog's own script (examples/demo/plan.json) comes first.
func reportPlan(t *testing.T) dev.SimPlan {
	t.Helper()
	plan, err := dev.LoadDemoPlan(demoDir(t))
	if err != nil {
		t.Fatal(err)
	}
	plan.Tasks = append(plan.Tasks,
		dev.SimTask{Match: "report-pass", Steps: []dev.SimStep{{Text: "Fixed."}}},
		dev.SimTask{Match: "report-fail", Steps: []dev.SimStep{
			{Text: "Let me look first.", Calls: []dev.SimCall{{Name: "shell", Args: json.RawMessage(`{"command":"true"}`)}}},
			{Text: "Too late: the turn limit ends this before."},
		}})
	return plan
}

func demoDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "..", "examples", "demo"))
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// simBacklog is 200 tasks of backlog=sim200: 100 for "model" a, of which
// 80 succeed, and 100 for b, of which 50 do.
func simBacklog() []fleet.TaskSpec {
	var specs []fleet.TaskSpec
	for i := range 200 {
		model, pass := "a", i%10 < 8
		if i >= 100 {
			model, pass = "b", i%2 == 0
		}
		spec := fleet.TaskSpec{Prompt: fmt.Sprintf("report-pass: task %d", i),
			Labels: map[string]string{"backlog": "sim200", "model": model}}
		if !pass {
			spec.Prompt = fmt.Sprintf("report-fail: task %d", i)
			spec.Limits.MaxTurns = 1
		}
		specs = append(specs, spec)
	}
	return specs
}

// TestReportInBrowser runs 200 tasks of two simulated "models" with
// different scripted success rates through a dev fleet, then checks that
// the dashboard's Backlog report shows the comparison with the right
// numbers: its summary table reads cell for cell as the Markdown of
// `dispatcher report --label backlog=sim200 --label model=a --compare
// model=b` (report.Markdown, which the command prints), and its charts
// carry the same counts and rates.
func TestReportInBrowser(t *testing.T) {
	bin := chromium(t)
	fl := startDev(t, dev.Config{Plan: reportPlan(t), Sessions: 8})
	c, err := fl.Client()
	if err != nil {
		t.Fatal(err)
	}
	bg := context.Background()
	if _, err := c.SubmitBatch(bg, simBacklog()); err != nil {
		t.Fatal(err)
	}
	demo, err := dev.RunDemo(bg, c, dev.DemoOptions{Dir: demoDir(t), Out: io.Discard, Poll: 100 * time.Millisecond})
	if err != nil || demo.Failed() != 0 {
		t.Fatalf("the demo backlog: %v, %d failed", err, demo.Failed())
	}
	testenv.Eventually(t, browserWait, "the 200 tasks to end", func() bool {
		n, err := c.CountsFiltered(bg, client.ListFilter{Labels: map[string]string{"backlog": "sim200"}})
		return err == nil && n[store.TaskSucceeded]+n[store.TaskFailed] == 200
	})

	q := client.ReportQuery{Labels: map[string]string{"backlog": "sim200", "model": "a"}, Compare: map[string]string{"model": "b"}}
	rs, err := c.Reports(bg, q)
	if err != nil {
		t.Fatal(err)
	}
	var md bytes.Buffer
	if err := report.Markdown(&md, rs); err != nil {
		t.Fatal(err)
	}
	t.Logf("the CLI's report:\n%s", md.String())
	summary := markdownSummary(t, md.String())
	want := map[string][]string{
		"Tasks":                                 {"100", "100"},
		"Queued / running / succeeded / failed": {"0 / 0 / 80 / 20", "0 / 0 / 50 / 50"},
		"Success rate (95% Wilson interval)":    {"80.0% [71.1%, 86.7%]", "50.0% [40.4%, 59.6%]"},
		"Median turns":                          {"1.0", "1.0"},
	}
	for name, cells := range want {
		if got := summary[name]; strings.Join(got, "|") != strings.Join(cells, "|") {
			t.Errorf("Markdown %q: %q, want %q", name, got, cells)
		}
	}
	if rs.Report.TopFailures[0].Reason != fleet.ReasonTurnLimit || rs.Compare.TopFailures[0].Tasks != 50 {
		t.Errorf("top failures: %+v / %+v", rs.Report.TopFailures, rs.Compare.TopFailures)
	}

	ctx := newBrowser(t, bin)
	run := func(step string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, actions...); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
	}
	run("open the report",
		chromedp.Navigate(fl.DashboardURL()),
		chromedp.WaitVisible(css(`#counts .count[data-state="all"]`)),
		chromedp.Click(css(`#report-box summary`)),
		chromedp.WaitVisible(css(`#report-label`)),
		chromedp.SetValue(css(`#report-label`), "backlog=sim200, model=a"),
		chromedp.SetValue(css(`#report-compare`), "model=b"),
		chromedp.Click(css(`#report-run`)),
		until(`document.querySelectorAll('#report-details .bd-point').length === 48`))

	compareSummary(t, ctx, summary)
	charts, err := chromedp.Run(ctx, chromedp.Evaluate[string](`JSON.stringify({
		rates: [...document.querySelectorAll('#report-rates g.rate')].map(g => [g.dataset.rate, g.dataset.low, g.dataset.high]),
		last: [...document.querySelectorAll('#report-details .report-filter')].map(d => { const p = [...d.querySelectorAll('g.bd-point')].pop();
			return [p.dataset.queued, p.dataset.running, p.dataset.succeeded, p.dataset.failed].join(' '); }),
		bars: document.querySelectorAll('#report-details svg.burndown rect').length,
		failures: [...document.querySelectorAll('#report-details li[data-reason]')].map(li => li.textContent.split(' e.g.')[0]),
	})`))
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Rates    [][3]string `json:"rates"`
		Last     []string    `json:"last"`
		Bars     int         `json:"bars"`
		Failures []string    `json:"failures"`
	}
	if err := json.Unmarshal([]byte(charts), &got); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got.Rates) != "[[80.0% 71.1% 86.7%] [50.0% 40.4% 59.6%]]" {
		t.Errorf("the success-rate chart shows %v", got.Rates)
	}
	if fmt.Sprint(got.Last) != "[0 0 80 20 0 0 50 50]" {
		t.Errorf("the burn-downs end at %v", got.Last)
	}
	if got.Bars < 48 {
		t.Errorf("the burn-downs draw %d bars, want at least one per point", got.Bars)
	}
	if fmt.Sprint(got.Failures) != "[turn_limit · 20 turn_limit · 50]" {
		t.Errorf("the top failures read %v", got.Failures)
	}
	saveScreenshot(t, ctx, "dashboard-report.png")

	// A failed task's timeline: its queue wait, its model call and its
	// tool call, in start order.
	failed := rs.Report.TopFailures[0].Examples[0]
	run("open a failed task's timeline",
		void(chromedp.Evaluate[string](`location.hash = "task=`+failed+`"`)),
		chromedp.WaitVisible(css(`#detail[data-state="failed"]`)),
		chromedp.WaitVisible(css(`#events .ev.tool[data-kind="TOOL_CALL_END"]`)),
		chromedp.Click(css(`.tab[data-tab="timeline"]`)),
		until(`document.querySelectorAll('#timeline g.tl-row').length >= 3`))
	kinds, err := chromedp.Run(ctx, chromedp.Evaluate[string](`[...document.querySelectorAll('#timeline g.tl-row')].map(g => g.dataset.kind).join(' ')`))
	if err != nil {
		t.Fatal(err)
	}
	if kinds != "queue model tool" {
		t.Errorf("the failed task's timeline rows are %q, want the queue wait, the model call, the tool call", kinds)
	}
	saveScreenshot(t, ctx, "dashboard-timeline.png")
	run("back to the report", chromedp.Click(css(`.tab[data-tab="events"]`)))

	checkDemoReport(t, ctx, c, run)
}

// checkDemoReport: the dashboard's report of the demo backlog (label
// demo=shop) shows the summary, outcome table and charts of the CLI's
// Markdown.
func checkDemoReport(t *testing.T, ctx context.Context, c *client.Client, run func(string, ...chromedp.Action[chromedp.Void])) {
	t.Helper()
	bg := context.Background()
	// The demo backlog's report: the same summary and outcome table as
	// the CLI's.
	demoRep, err := c.Reports(bg, client.ReportQuery{Labels: map[string]string{"demo": "shop"}})
	if err != nil {
		t.Fatal(err)
	}
	var md bytes.Buffer
	if err := report.Markdown(&md, demoRep); err != nil {
		t.Fatal(err)
	}
	t.Logf("the CLI's report of the demo backlog:\n%s", md.String())
	demoSummary := markdownSummary(t, md.String())
	if got := demoSummary["Queued / running / succeeded / failed"]; len(got) != 1 || got[0] != "0 / 0 / 4 / 0" {
		t.Errorf("the demo backlog's states: %q", got)
	}
	// Run until the report shown is demo=shop's: under the race detector
	// a report of every task (empty filters) once replaced it, and the
	// form is submitted again then.
	for deadline := time.Now().Add(browserWait); ; {
		run("the demo backlog's report",
			chromedp.SetValue(css(`#report-label`), "demo=shop"),
			void(chromedp.Evaluate[bool](`document.getElementById("report-compare").value = ""; true`)),
			chromedp.Click(css(`#report-run`)),
			until(`document.querySelectorAll('#report-details .report-filter').length === 1 && document.querySelectorAll('#report-rates g.rate').length === 1`))
		shown, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('#report-rates g.rate').dataset.filter`))
		if err != nil {
			t.Fatal(err)
		}
		if shown == "demo=shop" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the dashboard's report is of %q, want demo=shop", shown)
		}
	}
	compareSummary(t, ctx, demoSummary)
	// Its charts: the success rate with its interval as the Markdown
	// states it, and a burn-down ending with the four tasks succeeded.
	demoCharts, err := chromedp.Run(ctx, chromedp.Evaluate[string](`JSON.stringify({
		rates: [...document.querySelectorAll('#report-rates g.rate')].map(g => g.dataset.rate + ' [' + g.dataset.low + ', ' + g.dataset.high + ']'),
		last: [...document.querySelectorAll('#report-details .report-filter')].map(d => { const p = [...d.querySelectorAll('g.bd-point')].pop();
			return p ? [p.dataset.queued, p.dataset.running, p.dataset.succeeded, p.dataset.failed].join(' / ') : ''; }),
	})`))
	if err != nil {
		t.Fatal(err)
	}
	var dc struct {
		Rates []string `json:"rates"`
		Last  []string `json:"last"`
	}
	if err := json.Unmarshal([]byte(demoCharts), &dc); err != nil {
		t.Fatal(err)
	}
	if want := demoSummary["Success rate (95% Wilson interval)"]; fmt.Sprint(dc.Rates) != fmt.Sprint(want) {
		t.Errorf("the demo backlog's success-rate chart shows %v, the CLI %v", dc.Rates, want)
	}
	if want := demoSummary["Queued / running / succeeded / failed"]; fmt.Sprint(dc.Last) != fmt.Sprint(want) {
		t.Errorf("the demo backlog's burn-down ends at %v, the CLI's states are %v", dc.Last, want)
	}
	outcomes, err := chromedp.Run(ctx, chromedp.Evaluate[string](`[...document.querySelectorAll('#report-details .outcomes tbody tr')].map(tr =>
		'| ' + [...tr.querySelectorAll('td')].map(td => td.textContent).join(' | ') + ' |').join('\n')`))
	if err != nil {
		t.Fatal(err)
	}
	if outcomes == "" || !strings.Contains(md.String(), "|---|---|---|\n"+outcomes+"\n") {
		t.Errorf("the dashboard's outcome table of the demo backlog:\n%s\nis not the CLI's:\n%s", outcomes, md.String())
	}
	saveScreenshot(t, ctx, "dashboard-report-demo.png")
}

// compareSummary checks that the dashboard's summary table shows, row for
// row and cell for cell, the Markdown summary md.
func compareSummary(t *testing.T, ctx context.Context, md map[string][]string) {
	t.Helper()
	raw, err := chromedp.Run(ctx, chromedp.Evaluate[string](`JSON.stringify(Object.fromEntries([...document.querySelectorAll('#report-summary tbody tr')].map(tr =>
		[tr.querySelector('th').textContent, [...tr.querySelectorAll('td')].map(td => td.textContent)])))`))
	if err != nil {
		t.Fatal(err)
	}
	var shown map[string][]string
	if err := json.Unmarshal([]byte(raw), &shown); err != nil {
		t.Fatal(err)
	}
	if len(shown) != len(report.Metrics) {
		t.Errorf("the dashboard's summary has %d rows, the Markdown %d", len(shown), len(report.Metrics))
	}
	for name, cells := range md {
		if strings.Join(shown[name], "|") != strings.Join(cells, "|") {
			t.Errorf("%q: the dashboard shows %q, the CLI %q", name, shown[name], cells)
		}
	}
}

// markdownSummary reads the summary table of report.Markdown: metric name
// to its cells.
func markdownSummary(t *testing.T, md string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	names := map[string]bool{}
	for _, m := range report.Metrics {
		names[m.Name] = true
	}
	for line := range strings.SplitSeq(md, "\n") {
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		if len(cells) > 1 && names[cells[0]] {
			out[cells[0]] = cells[1:]
		}
	}
	if len(out) != len(report.Metrics) {
		t.Fatalf("the Markdown's summary has %d of %d metrics:\n%s", len(out), len(report.Metrics), md)
	}
	return out
}

// newBrowser starts a headless Chromium for the test, bounded by
// browserWait.
func newBrowser(t *testing.T, bin string) context.Context {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(bin),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1440, 1400),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true), // CI runs as root
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-dev-shm-usage", true),
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelAlloc)
	ctx, cancelBrowser := chromedp.NewContext(allocCtx, chromedp.WithLogf(t.Logf))
	t.Cleanup(cancelBrowser)
	// Each step waits at most browserWait (chromedp.WithPollingTimeout);
	// the browser as a whole lives until shortly before the test binary's
	// deadline, so that a test of many steps on a loaded machine is not cut
	// short by one budget for all of them.
	deadline := time.Now().Add(3 * browserWait)
	if d, ok := t.Deadline(); ok {
		deadline = d.Add(-30 * time.Second)
	}
	ctx, cancel := context.WithDeadline(ctx, deadline)
	t.Cleanup(cancel)
	return ctx
}
