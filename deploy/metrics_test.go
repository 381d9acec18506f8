package deploy

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// assumedMetrics are metrics the dashboard or the alerts query that package
// fleet does not export yet, with what they should carry. Reconcile them
// with the code: export the metric, or change the queries.
var assumedMetrics = map[string]string{
	"agentfleet_worker_llm_cost_usd_total": "counter of model spend in USD by provider and model, from ProviderConfig prices",
}

var metricName = regexp.MustCompile(`\bagentfleet_[a-z0-9_]+`)

// queriedMetrics returns the agentfleet_* metrics queried by the dashboard
// and the alert rules, histogram series reduced to their metric name.
func queriedMetrics(t *testing.T) map[string][]string {
	t.Helper()
	used := map[string][]string{} // metric -> where
	add := func(where, expr string) {
		for _, m := range metricName.FindAllString(expr, -1) {
			for _, suffix := range []string{"_bucket", "_sum", "_count"} {
				m = strings.TrimSuffix(m, suffix)
			}
			if !slices.Contains(used[m], where) {
				used[m] = append(used[m], where)
			}
		}
	}
	for _, p := range loadDashboard(t).Panels {
		for _, q := range p.Targets {
			add("dashboard panel "+p.Title, q.Expr)
		}
	}
	for _, r := range loadAlertRules(t) {
		add("alert "+r.Alert, r.Expr)
	}
	return used
}

type alertRule struct {
	Alert       string            `yaml:"alert"`
	Expr        string            `yaml:"expr"`
	Annotations map[string]string `yaml:"annotations"`
}

func loadAlertRules(t *testing.T) []alertRule {
	t.Helper()
	var f struct {
		Groups []struct {
			Rules []alertRule `yaml:"rules"`
		} `yaml:"groups"`
	}
	decodeFile(t, filepath.Join("prometheus", "alerts.yaml"), &f)
	var rules []alertRule
	for _, g := range f.Groups {
		rules = append(rules, g.Rules...)
	}
	return rules
}

// fleetSource returns the non-test Go source of the packages that define
// the metrics: the dispatcher's and the worker's.
func fleetSource(t *testing.T) string {
	t.Helper()
	var files []string
	for _, pkg := range []string{"dispatcher", "worker"} {
		matches, err := filepath.Glob(filepath.Join("..", "fleet", pkg, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, matches...)
	}
	var b strings.Builder
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(src)
	}
	return b.String()
}

// exported reports whether src defines the metric: by its full name, or
// (worker metrics are built from Namespace "agentfleet" and Subsystem
// "worker") by the rest of its name.
func exported(src, metric string) bool {
	if strings.Contains(src, `"`+metric+`"`) {
		return true
	}
	rest, ok := strings.CutPrefix(metric, "agentfleet_worker_")
	return ok && strings.Contains(src, `"agentfleet", "worker"`) && strings.Contains(src, `"`+rest+`"`)
}

// TestQueriedMetricsExist: a dashboard panel or an alert on a metric that
// nothing exports shows nothing and never fires.
func TestQueriedMetricsExist(t *testing.T) {
	src := fleetSource(t)
	used := queriedMetrics(t)
	if len(used) < 10 {
		t.Fatalf("only %d metrics queried: the dashboard or the alerts lost their queries", len(used))
	}
	for m, where := range used {
		if exported(src, m) {
			if why, ok := assumedMetrics[m]; ok {
				t.Logf("%s (%s) is exported now: remove it from assumedMetrics", m, why)
			}
			continue
		}
		if _, ok := assumedMetrics[m]; !ok {
			t.Errorf("%s, queried by %s, is not exported by fleet/dispatcher or fleet/worker (nor listed in assumedMetrics)", m, strings.Join(where, ", "))
		}
	}
}

// TestAlertRunbooks: every alert links a section of docs/operations.md that
// exists.
func TestAlertRunbooks(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	anchors := map[string]bool{}
	for line := range strings.SplitSeq(string(doc), "\n") {
		if strings.HasPrefix(line, "#") {
			anchors[headingAnchor(strings.TrimLeft(line, "# "))] = true
		}
	}
	for _, r := range loadAlertRules(t) {
		link := r.Annotations["runbook"]
		anchor, ok := strings.CutPrefix(link, "docs/operations.md#")
		if !ok {
			t.Errorf("alert %s: runbook %q, want docs/operations.md#<section>", r.Alert, link)
			continue
		}
		if !anchors[anchor] {
			t.Errorf("alert %s: docs/operations.md has no heading with anchor #%s", r.Alert, anchor)
		}
	}
}

// headingAnchor is the anchor GitHub gives a Markdown heading: lower case,
// spaces to '-', punctuation other than '-' and '_' dropped.
func headingAnchor(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(h)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
		}
	}
	return b.String()
}

// TestPrometheusConfig: the example configuration loads the rules and gives
// the scraped pods the job names the alerts and the dashboard query.
func TestPrometheusConfig(t *testing.T) {
	var cfg struct {
		RuleFiles     []string `yaml:"rule_files"`
		ScrapeConfigs []struct {
			RelabelConfigs []struct {
				SourceLabels []string `yaml:"source_labels"`
				TargetLabel  string   `yaml:"target_label"`
				Regex        string   `yaml:"regex"`
				Action       string   `yaml:"action"`
			} `yaml:"relabel_configs"`
		} `yaml:"scrape_configs"`
	}
	decodeFile(t, filepath.Join("prometheus", "prometheus.yaml"), &cfg)
	if !slices.Contains(cfg.RuleFiles, "alerts.yaml") {
		t.Errorf("rule_files %v do not load alerts.yaml", cfg.RuleFiles)
	}
	if len(cfg.ScrapeConfigs) != 1 {
		t.Fatalf("%d scrape configs, want 1", len(cfg.ScrapeConfigs))
	}
	const appLabel = "__meta_kubernetes_pod_label_app_kubernetes_io_name"
	var keeps, job bool
	for _, r := range cfg.ScrapeConfigs[0].RelabelConfigs {
		if slices.Equal(r.SourceLabels, []string{appLabel}) {
			keeps = keeps || r.Action == "keep" && r.Regex == "agentfleet-(dispatcher|worker)"
			job = job || r.TargetLabel == "job"
		}
	}
	if !keeps || !job {
		t.Errorf("relabeling must keep the agentfleet-dispatcher and agentfleet-worker pods (%v) and copy %s to job (%v)", keeps, appLabel, job)
	}
}
